import AppStore
import AppStoreTesting
import Core
import Foundation
import HTTPClient
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification

/// The verifier end to end against a real redis-server and the real `appstore-sim` binary.
@Suite(.serialized)
struct VerifierFlowTests {
    /// A receipt ending with `+` whose `+` became spaces on its way (an app posting it as a form field): the
    /// verifier reads the space at its end as `+`, not as stray whitespace, and verifies it.
    @Test func aFormDecodedReceiptEndingWithPlusIsVerified() async throws {
        try await VerifierHarness.with { harness in
            // The bare receipt token the app receipt (PKCS#7, whose base64 ends in padding) carries: 1 in 64 ends with `+`.
            var receipt = ""
            for _ in 0..<1000 where !receipt.hasSuffix("+") {
                let appReceipt = try #require(try await harness.sim.purchase()["receipt"] as? String)
                let opaque = try AppReceiptParser.parse(Array(try #require(Data(base64Encoded: appReceipt)))).opaqueValue
                receipt = Data(try #require(opaque)).base64EncodedString()
            }
            try #require(receipt.hasSuffix("+"), "no receipt ending with + in 1000 purchases")
            try await harness.withVerifier { _ in
                let jobID = try await harness.enqueue(kind: .receipt, payload: receipt.replacingOccurrences(of: "+", with: " "))
                let events = try await harness.waitForEvents(1)
                #expect(events.first?.jobId == jobID)
            }
        }
    }

    @Test func receiptIsVerifiedAndItsCanonicalEventEmitted() async throws {
        try await VerifierHarness.with { harness in
            let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"
            let purchase = try await harness.sim.purchase(["quantity": 3, "appAccountToken": token])
            let receipt = try #require(purchase["receipt"] as? String)
            let transactionId = try #require(purchase["transactionId"] as? String)
            try await harness.withVerifier { metricsPort in
                let jobID = try await harness.enqueue(kind: .receipt, payload: receipt, user: "user-7", order: "order-9")
                let events = try await harness.waitForEvents(1)
                let event = try #require(events.first)
                #expect(event.version == 1)
                #expect(event.jobId == jobID)
                #expect(event.kind == .receipt)
                #expect(event.source == .client)
                #expect(event.userId == "user-7")
                #expect(event.orderNo == "order-9")
                #expect(event.environment == "Production")
                #expect(event.notification == nil)
                let transaction = try #require(event.transactions.first { $0.transactionId == transactionId })
                #expect(transaction.productId == "com.example.coins100")
                #expect(transaction.quantity == 3)
                #expect(transaction.appAccountToken == token)
                #expect(transaction.purchaseDate > 1_600_000_000_000)
                #expect(transaction.revocationDate == nil)
                let status = try await harness.waitForStatus(jobID) { $0["verified.at"] != nil }
                #expect(status["state"] == "verifying")
                #expect(try await harness.pendingCount() == 0)

                let metrics = try await harness.sim.transport.send(
                    HTTPTransportRequest(
                        method: .get, url: try #require(URL(string: "http://127.0.0.1:\(metricsPort)/healthz"))))
                #expect(metrics.status == 200)
                let ready = try await harness.sim.transport.send(
                    HTTPTransportRequest(
                        method: .get, url: try #require(URL(string: "http://127.0.0.1:\(metricsPort)/readyz"))))
                #expect(ready.status == 200, "\(String(decoding: ready.body, as: UTF8.self))")
            }
        }
    }

    @Test func sandboxReceiptFollows21007WhenSandboxIsAccepted() async throws {
        try await VerifierHarness.with { harness in
            let purchase = try await harness.sim.purchase(["environment": "Sandbox"])
            let receipt = try #require(purchase["receipt"] as? String)
            try await harness.withVerifier(["TOLLGATE_ACCEPT_SANDBOX": "true"]) { _ in
                try await harness.enqueue(kind: .receipt, payload: receipt)
                let event = try #require(try await harness.waitForEvents(1).first)
                #expect(event.environment == "Sandbox")
                #expect(event.transactions.first?.transactionId == purchase["transactionId"] as? String)
                #expect(event.apple == nil, "Apple's JWS is kept only with TOLLGATE_EVENTS_INCLUDE_APPLE")
            }
            #expect(try await harness.sim.requestCount("verifyReceipt.production") >= 1)
            #expect(try await harness.sim.requestCount("verifyReceipt.sandbox") >= 1)

            // Without TOLLGATE_ACCEPT_SANDBOX a production deployment refuses it.
            try await harness.withVerifier { _ in
                let jobID = try await harness.enqueue(kind: .receipt, payload: receipt)
                let status = try await harness.waitForStatus(jobID) { $0["state"] == "rejected" }
                #expect(status["reason"] == "sandbox_not_allowed")
            }
            #expect(try await harness.events().count == 1)
        }
    }

    @Test func genuineNotificationIsVerifiedAndAForgedOneRejected() async throws {
        try await VerifierHarness.with { harness in
            let purchase = try await harness.sim.purchase()
            let signedPayload = try #require(purchase["signedPayload"] as? String)
            let genuine = JSONValue.object(["signedPayload": .string(signedPayload)]).data

            // The same notification body, signed by a CA of our own (a chain Apple's root never issued).
            let forger = try TestCertificateAuthority()
            let payloadSegment = try #require(signedPayload.split(separator: ".").dropFirst().first)
            let payloadJSON = try #require(Base64URL.decode(String(payloadSegment)))
            let forged = try forger.signer().sign(json: Data(payloadJSON))
            let forgedBody = JSONValue.object(["signedPayload": .string(forged)]).data

            let listener = try await JobResultListener.start(harness)
            defer { listener.stop() }
            try await harness.withVerifier { _ in
                let forgedJob = try await harness.enqueue(
                    kind: .notificationV2, payload: String(decoding: forgedBody, as: UTF8.self), user: nil)
                let status = try await harness.waitForStatus(forgedJob) { $0["state"] == "rejected" }
                #expect(status["reason"] == "invalid_chain")
                #expect(try await listener.announced(until: forgedJob).contains(forgedJob))
                #expect(try await harness.events().isEmpty)

                let genuineJob = try await harness.enqueue(
                    kind: .notificationV2, payload: String(decoding: genuine, as: UTF8.self), user: nil)
                let event = try #require(try await harness.waitForEvents(1).first)
                #expect(event.jobId == genuineJob)
                #expect(event.source == .apple)
                #expect(event.notification?.type == "ONE_TIME_CHARGE")
                #expect(event.notification?.notificationUUID == purchase["notificationUUID"] as? String)
                #expect(event.notification?.version == 2)
                #expect(event.transactions.first?.transactionId == purchase["transactionId"] as? String)
                #expect(event.transactions.first?.productType == "Consumable")
                #expect(event.transactions.first?.signedDate != nil)
            }
            #expect(try await harness.events().count == 1)
        }
    }
}
