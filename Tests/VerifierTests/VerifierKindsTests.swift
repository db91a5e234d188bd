import AppStore
import AppStoreTesting
import Core
import Foundation
import HTTPClient
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification

/// Each job kind's particular rules: StoreKit 2 confirmed with the API, `TEST`, `CONSUMPTION_REQUEST`,
/// V1 notifications, Apple's `Retry-After`.
@Suite(.serialized)
struct VerifierKindsTests {
    @Test func storeKit2TransactionConfirmedWithTheAPISeesALaterRefund() async throws {
        try await VerifierHarness.with { harness in
            let purchase = try await harness.sim.purchase(["productId": "com.example.noads", "type": "Non-Consumable"])
            let signed = try #require(purchase["signedTransaction"] as? String)
            let transactionId = try #require(purchase["transactionId"] as? String)
            try await harness.sim.post(
                "/sim/events",
                ["type": "REFUND", "transactionId": transactionId, "revocationReason": 1, "revocationPercentage": 25_000])
            var settings = try harness.apiSettings()
            settings["TOLLGATE_CONFIRM_WITH_API"] = "true"
            settings["TOLLGATE_EVENTS_INCLUDE_APPLE"] = "true"
            try await harness.withVerifier(settings) { _ in
                // Whitespace around the JWS, as a client may send it, is not part of it.
                let jobID = try await harness.enqueue(kind: .transaction, payload: "\n \(signed) \t\r\n", order: "order-1")
                let event = try #require(try await harness.waitForEvents(1).first)
                #expect(event.jobId == jobID)
                #expect(event.kind == .transaction)
                #expect(event.orderNo == "order-1")
                let transaction = try #require(event.transactions.first)
                #expect(event.transactions.count == 1)
                #expect(transaction.transactionId == transactionId)
                #expect(transaction.productType == "Non-Consumable")
                #expect(transaction.revocationDate != nil)
                #expect(transaction.revocationReason == 1)
                // The refund's detail and the price reach the ledger as Apple signed them.
                #expect(transaction.revocationType == "REFUND_PRORATED")
                #expect(transaction.revocationPercentage == 25_000)
                #expect(transaction.price != nil && transaction.currency == "USD")
                // Apple's own JWS goes with the event: the one Get Transaction Info answered (with the refund), not
                // the client's.
                let apple = try #require(event.apple)
                #expect(apple.split(separator: ".").count == 3 && apple != signed)
                let payload = try #require(Base64URL.decode(apple.split(separator: ".")[1]))
                #expect(String(decoding: payload, as: UTF8.self).contains("\"revocationDate\""))
            }
            #expect(try await harness.sim.requestCount("api.production") >= 1)
        }
    }

    @Test func testNotificationIsRecordedAndConsumptionRequestAnsweredFromTheLedger() async throws {
        try await VerifierHarness.with { harness in
            // A TEST notification signed by the simulator's (trusted) CA.
            let authority = try TestCertificateAuthority(directory: harness.sim.directory.appendingPathComponent("ca"))
            let test: [String: Any] = [
                "notificationType": "TEST", "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0",
                "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
                "data": ["bundleId": "com.example.app", "environment": "Production", "appAppleId": 1_234_567_890],
            ]
            let testJWS = try authority.signer().sign(json: try JSONSerialization.data(withJSONObject: test))
            let testBody = String(decoding: JSONValue.object(["signedPayload": .string(testJWS)]).data, as: UTF8.self)

            let purchase = try await harness.sim.purchase()
            let transactionId = try #require(purchase["transactionId"] as? String)
            var settings = try harness.apiSettings()
            settings["TOLLGATE_REFUND_PREFERENCE"] = "2"
            try await harness.withVerifier(settings) { _ in
                let testJob = try await harness.enqueue(kind: .notificationV2, payload: testBody, user: nil)
                let testStatus = try await harness.waitForStatus(testJob) { $0["state"] == "fulfilled" }
                #expect(testStatus["result"]?.contains("test_notification") == true)

                func consumptionRequest() async throws -> String {
                    let request = try await harness.sim.post(
                        "/sim/events", ["type": "CONSUMPTION_REQUEST", "transactionId": transactionId])
                    let payload = try #require(request["signedPayload"] as? String)
                    let body = String(decoding: JSONValue.object(["signedPayload": .string(payload)]).data, as: UTF8.self)
                    let job = try await harness.enqueue(kind: .notificationV2, payload: body, user: nil)
                    return try await harness.waitForStatus(job) { $0["state"] == "fulfilled" }["result"] ?? ""
                }
                let notSent = #""sent":false,"reason":"no_customer_consent""#

                // No owner known, hence no consent: nothing is sent, and the job says why.
                #expect(try await consumptionRequest().contains(notSent))
                #expect(try await harness.sim.send(.get, "/sim/consumption/\(transactionId)").status == 404)

                // Credited to user-5 (100 coins, 40 left), but no consent recorded (or withdrawn): still nothing.
                _ = try await harness.redis.send("SET", harness.keys.binding(originalTransactionId: transactionId), "user-5")
                _ = try await harness.redis.send(
                    "HSET", harness.keys.transaction(user: "user-5", transactionId: transactionId), "type", "consumable",
                    "coins", "100", "state", "applied")
                _ = try await harness.redis.send("HSET", harness.keys.account(user: "user-5"), "coins", "40")
                #expect(try await consumptionRequest().contains(notSent))
                _ = try await harness.redis.send("HSET", harness.keys.consent(user: "user-5"), "consented", "0")
                #expect(try await consumptionRequest().contains(notSent))
                #expect(try await harness.sim.send(.get, "/sim/consumption/\(transactionId)").status == 404)

                // Consent recorded: answered with v2, from the ledger (60 of 100 coins gone → 60000).
                _ = try await harness.redis.send("HSET", harness.keys.consent(user: "user-5"), "consented", "1")
                #expect(try await consumptionRequest().contains(#""sent":true,"api":"v2","deliveryStatus":"DELIVERED""#))
                var sent = try await Self.consumption(harness, transactionId)
                #expect(sent["sim.endpoint"]?.string == "v2")
                #expect(sent["customerConsented"]?.bool == true)
                #expect(sent["deliveryStatus"]?.string == "DELIVERED")
                #expect(sent["consumptionPercentage"]?.int == 60_000)
                #expect(sent["refundPreference"]?.string == "DECLINE")
                #expect(sent["sampleContentProvided"]?.bool == false)

                // Not in the owner's ledger: not delivered, nothing consumed.
                _ = try await harness.redis.send("DEL", harness.keys.transaction(user: "user-5", transactionId: transactionId))
                #expect(try await consumptionRequest().contains(#""deliveryStatus":"UNDELIVERED_OTHER""#))
                sent = try await Self.consumption(harness, transactionId)
                #expect(sent["deliveryStatus"]?.string == "UNDELIVERED_OTHER")
                #expect(sent["consumptionPercentage"]?.int == 0)
            }
            // V1 only behind the setting, and with the same consent rule.
            settings["TOLLGATE_CONSUMPTION_API"] = "v1"
            try await harness.withVerifier(settings) { _ in
                let request = try await harness.sim.post("/sim/events", ["type": "CONSUMPTION_REQUEST", "transactionId": transactionId])
                let payload = try #require(request["signedPayload"] as? String)
                let body = String(decoding: JSONValue.object(["signedPayload": .string(payload)]).data, as: UTF8.self)
                let job = try await harness.enqueue(kind: .notificationV2, payload: body, user: nil)
                let status = try await harness.waitForStatus(job) { $0["state"] == "fulfilled" }
                #expect(status["result"]?.contains(#""sent":true,"api":"v1""#) == true)
                let sent = try await Self.consumption(harness, transactionId)
                #expect(sent["sim.endpoint"]?.string == "v1")
                #expect(sent["deliveryStatus"]?.int == 5)
                #expect(sent["refundPreference"]?.int == 2)
                #expect(sent["customerConsented"]?.bool == true)
            }
            #expect(try await harness.events().isEmpty)
        }
    }

    static func consumption(_ harness: VerifierHarness, _ transactionId: String) async throws -> [String: JSONValue] {
        let response = try await harness.sim.send(.get, "/sim/consumption/\(transactionId)")
        return JSONValue.read(response.body)?.members ?? [:]
    }

    /// A V1 notification is a trigger (issue 13's second hole): whatever its own `latest_receipt_info` claims
    /// (here 20 units of another product under an invented transaction id), the event holds what Apple answers
    /// for its `latest_receipt`, and a notification whose receipt Apple refuses credits nothing.
    @Test func aV1NotificationCarriesOnlyWhatAppleAnswersForItsReceipt() async throws {
        try await VerifierHarness.with { harness in
            func notification(receipt: String?) -> String {
                var unified: [String: Any] = [
                    "environment": "Production", "status": 0,
                    "latest_receipt_info": [
                        [
                            "transaction_id": "9999999999", "original_transaction_id": "9999999999",
                            "product_id": "com.example.coins2000", "quantity": "20", "purchase_date_ms": "1760000000000",
                        ]
                    ],
                ]
                if let receipt { unified["latest_receipt"] = receipt }
                let json: [String: Any] = [
                    "notification_type": "INITIAL_BUY", "password": "s3cret", "environment": "PROD",
                    "bid": "com.example.app", "unified_receipt": unified,
                ]
                return String(decoding: (try? JSONSerialization.data(withJSONObject: json)) ?? Data(), as: UTF8.self)
            }
            let bought = try await harness.sim.purchase(["productId": "com.example.coins100"])
            let receipt = try #require(bought["receipt"] as? String)
            let transactionId = try #require(bought["transactionId"] as? String)
            try await harness.withVerifier(["TOLLGATE_SHARED_SECRET": "s3cret"]) { _ in
                let invented = try await harness.enqueue(kind: .notificationV1, payload: notification(receipt: nil), user: nil)
                let refused = try await harness.waitForStatus(invented) { $0["state"] == "rejected" }
                #expect(refused["reason"] == "invalid_format", "\(refused)")

                let garbage = try await harness.enqueue(
                    kind: .notificationV1, payload: notification(receipt: "bm90IGEgcmVjZWlwdA=="), user: nil)
                let unknown = try await harness.waitForStatus(garbage) { $0["state"] == "rejected" }
                #expect(unknown["reason"] != nil, "\(unknown)")

                let trigger = try await harness.enqueue(kind: .notificationV1, payload: notification(receipt: receipt), user: nil)
                let event = try #require(try await harness.waitForEvents(1).first)
                #expect(event.jobId == trigger)
                #expect(event.kind == .notificationV1)
                #expect(event.notification?.type == "INITIAL_BUY")
                #expect(event.notification?.version == 1)
                #expect(event.transactions.map(\.transactionId) == [transactionId])
                #expect(event.transactions.map(\.productId) == ["com.example.coins100"])
                #expect(event.transactions.map(\.quantity) == [1])
            }
        }
    }

    @Test func applesRetryAfterIsHonoured() async throws {
        try await VerifierHarness.with { harness in
            let receipt = try #require(try await harness.sim.purchase()["receipt"] as? String)
            try await harness.sim.post("/sim/faults", ["target": "verifyReceipt", "status": 429, "retryAfter": 1, "times": 1])
            try await harness.withVerifier { _ in
                let jobID = try await harness.enqueue(kind: .receipt, payload: receipt)
                let retrying = try await harness.waitForStatus(jobID) { $0["state"] == "retrying" }
                #expect(retrying["reason"] == "apple_rate_limited")
                let next = try #require(retrying["next.at"].flatMap { Int64($0) })
                let updated = try #require(retrying["updated.at"].flatMap { Int64($0) })
                #expect(next - updated >= 1000)
                #expect(try await harness.waitForEvents(1).count == 1)
            }
        }
    }
}
