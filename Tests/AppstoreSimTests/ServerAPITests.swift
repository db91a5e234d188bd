import AppStore
@preconcurrency import Crypto
import Foundation
import HTTPClient
import Testing

@testable import appstore_sim

@Suite("App Store Server API")
struct ServerAPITests {
    @Test func historyPagesThroughEveryRenewal() async throws {
        let settings: (inout SimConfiguration) -> Void = { $0.pageSize = 3 }
        try await SimHarness.with(settings) { sim in
            let auth = TestToken.header(try TestToken.make(key: P256.Signing.PrivateKey()))
            let purchase = try await sim.purchase(type: "Auto-Renewable Subscription", productId: "com.example.vip.month")
            var expected = [purchase.transactionId]
            for _ in 0..<3 {
                let renewed = try await sim.event("DID_RENEW", purchase.transactionId)
                expected.append(try #require(renewed["transactionId"] as? String))
            }
            let verifier = try SignedDataTests.verifier(roots: [try await sim.rootDER()])
            var seen: [String] = []
            var revision = ""
            var pages = 0
            var hasMore = true
            while hasMore && pages < 5 {
                let (status, page) = try await sim.get("/inApps/v2/history/\(expected[2])?revision=\(revision)", headers: auth)
                #expect(status == 200)
                #expect(page["bundleId"] as? String == "com.example.app")
                for jws in page["signedTransactions"] as? [String] ?? [] {
                    let transaction = try #require(await verifier.verifyTransaction(jws).value)
                    #expect(transaction.originalTransactionId == purchase.transactionId)
                    seen.append(transaction.transactionId ?? "")
                }
                hasMore = page["hasMore"] as? Bool ?? false
                revision = page["revision"] as? String ?? ""
                pages += 1
            }
            #expect(pages == 2)
            #expect(seen == expected)

            let descending = try await sim.get("/inApps/v2/history/\(purchase.transactionId)?sort=DESCENDING", headers: auth)
            let first = try #require((descending.body["signedTransactions"] as? [String])?.first)
            #expect(await verifier.verifyTransaction(first).value?.transactionId == expected.last)
            let badRevision = try await sim.get("/inApps/v2/history/\(purchase.transactionId)?revision=%%%", headers: auth)
            #expect(badRevision.status == 400)
            #expect(badRevision.body["errorCode"] as? Int == 4_000_005)
        }
    }

    @Test func refundShowsInTransactionInfoAndStatusesFollowRenewalState() async throws {
        try await SimHarness.with { sim in
            let auth = TestToken.header(try TestToken.make(key: P256.Signing.PrivateKey()))
            let verifier = try SignedDataTests.verifier(roots: [try await sim.rootDER()])
            let coins = try await sim.purchase()
            try await sim.event("REFUND", coins.transactionId)
            let info = try await sim.get("/inApps/v1/transactions/\(coins.transactionId)", headers: auth)
            #expect(info.status == 200)
            let refundedJWS = try #require(info.body["signedTransactionInfo"] as? String)
            let refunded = try #require(await verifier.verifyTransaction(refundedJWS).value)
            #expect(refunded.revocationDate != nil)
            #expect(refunded.revocationReason == .other)
            try await sim.event("REFUND_REVERSED", coins.transactionId)
            let restoredInfo = try await sim.get("/inApps/v1/transactions/\(coins.transactionId)", headers: auth)
            let restored = try #require(await verifier.verifyTransaction(restoredInfo.body["signedTransactionInfo"] as? String ?? "").value)
            #expect(restored.revocationDate == nil)

            let vip = try await sim.purchase(type: "Auto-Renewable Subscription", productId: "com.example.vip.month")
            try await sim.event("DID_FAIL_TO_RENEW", vip.transactionId, subtype: "GRACE_PERIOD")
            func status() async throws -> (Int, JWSRenewalInfoDecodedPayload) {
                let (code, body) = try await sim.get("/inApps/v1/subscriptions/\(vip.transactionId)", headers: auth)
                #expect(code == 200)
                let groups = try #require(body["data"] as? [[String: Any]])
                let last = try #require((groups.first?["lastTransactions"] as? [[String: Any]])?.first)
                let renewal = try #require(await verifier.verifyRenewalInfo(last["signedRenewalInfo"] as? String ?? "").value)
                return (last["status"] as? Int ?? 0, renewal)
            }
            var (state, renewal) = try await status()
            #expect(state == 4)
            #expect(renewal.isInBillingRetryPeriod == true)
            #expect(renewal.gracePeriodExpiresDate != nil)
            try await sim.event("GRACE_PERIOD_EXPIRED", vip.transactionId)
            (state, _) = try await status()
            #expect(state == 3)
            try await sim.event("DID_RENEW", vip.transactionId)
            try await sim.event("DID_CHANGE_RENEWAL_STATUS", vip.transactionId, subtype: "AUTO_RENEW_DISABLED")
            (state, renewal) = try await status()
            #expect(state == 1)
            #expect(renewal.autoRenewStatus == .off)
            #expect(renewal.isInBillingRetryPeriod == false)

            let missing = try await sim.get("/inApps/v1/transactions/1999999999999999", headers: auth)
            #expect(missing.status == 404)
            #expect(missing.body["errorCode"] as? Int == 4_040_010)
            #expect(missing.body["errorMessage"] as? String == "Transaction id not found.")
            let sandboxSide = try await sim.get("/sandbox/inApps/v1/transactions/\(vip.transactionId)", headers: auth)
            #expect(sandboxSide.status == 404)
        }
    }

    @Test func tokensAreCheckedAgainstTheConfiguredKey() async throws {
        let key = P256.Signing.PrivateKey()
        let settings: (inout SimConfiguration) -> Void = { $0.apiPublicKey = key.publicKey }
        try await SimHarness.with(settings) { sim in
            let purchase = try await sim.purchase()
            let path = "/inApps/v1/transactions/\(purchase.transactionId)"
            #expect(try await sim.get(path, headers: TestToken.header(try TestToken.make(key: key))).status == 200)
            let forged = try await sim.get(path, headers: TestToken.header(try TestToken.make(key: P256.Signing.PrivateKey())))
            #expect(forged.status == 401)
            #expect(forged.body["errorCode"] as? Int == 4_010_000)
            #expect(try await sim.get(path).status == 401)
            #expect(try await sim.get(path, headers: ["Authorization": "Bearer abc.def.ghi"]).status == 401)
            #expect(try await sim.get(path, headers: TestToken.header(try TestToken.make(key: key, audience: "other"))).status == 401)
            #expect(try await sim.get(path, headers: TestToken.header(try TestToken.make(key: key, expiresIn: -60))).status == 401)
            let otherApp = try await sim.get(path, headers: TestToken.header(try TestToken.make(key: key, bid: "com.other.app")))
            #expect(otherApp.status == 404)
        }
    }

    @Test func consumptionInformationIsRecorded() async throws {
        try await SimHarness.with { sim in
            let auth = TestToken.header(try TestToken.make(key: P256.Signing.PrivateKey()))
            let purchase = try await sim.purchase()
            try await sim.event("CONSUMPTION_REQUEST", purchase.transactionId, extra: ["reason": "FULFILLMENT_ISSUE"])
            let body = Data(#"{"customerConsented":true,"consumptionStatus":2,"deliveryStatus":0,"sampleContentProvided":false}"#.utf8)
            let put = try await sim.send(.put, "/inApps/v1/transactions/consumption/\(purchase.transactionId)", body: body, headers: auth)
            #expect(put.status == 202)
            let recorded = try await sim.get("/sim/consumption/\(purchase.transactionId)")
            #expect(recorded.body["consumptionStatus"] as? Int == 2)
            let bad = try await sim.send(
                .put, "/inApps/v1/transactions/consumption/\(purchase.transactionId)", body: Data("[".utf8), headers: auth)
            #expect(bad.status == 400)
            #expect(recorded.body["sim.endpoint"] as? String == "v1")
        }
    }

    @Test func consumptionInformationV2IsCheckedAsAppleDoesAndRecorded() async throws {
        try await SimHarness.with { sim in
            let auth = TestToken.header(try TestToken.make(key: P256.Signing.PrivateKey()))
            let purchase = try await sim.purchase()
            let path = "/inApps/v2/transactions/consumption/\(purchase.transactionId)"
            func put(_ json: String) async throws -> Int {
                try await sim.send(.put, path, body: Data(json.utf8), headers: auth).status
            }
            let refused = [
                #"{"customerConsented":false,"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#,
                #"{"customerConsented":true,"deliveryStatus":"DELIVERED_SOMEHOW","sampleContentProvided":false}"#,
                #"{"customerConsented":true,"deliveryStatus":0,"sampleContentProvided":false}"#,
                #"{"customerConsented":true,"deliveryStatus":"DELIVERED"}"#,
                #"{"customerConsented":true,"deliveryStatus":"UNDELIVERED_OTHER","consumptionPercentage":5,"sampleContentProvided":false}"#,
                #"{"customerConsented":true,"deliveryStatus":"DELIVERED","consumptionPercentage":100001,"sampleContentProvided":false}"#,
                #"{"customerConsented":true,"deliveryStatus":"DELIVERED","refundPreference":"GRANT_PRORATED","sampleContentProvided":false}"#,
                #"{"customerConsented":true,"deliveryStatus":"DELIVERED","refundPreference":"MAYBE","sampleContentProvided":false}"#,
            ]
            for body in refused { #expect(try await put(body) == 400, "\(body)") }
            #expect(try await sim.send(.get, "/sim/consumption/\(purchase.transactionId)").status == 404)
            let accepted =
                #"{"customerConsented":true,"deliveryStatus":"DELIVERED","consumptionPercentage":25000,"#
                + #""refundPreference":"GRANT_PRORATED","sampleContentProvided":true}"#
            #expect(try await put(accepted) == 202)
            let recorded = try await sim.get("/sim/consumption/\(purchase.transactionId)")
            #expect(recorded.body["sim.endpoint"] as? String == "v2")
            #expect(recorded.body["consumptionPercentage"] as? Int == 25_000)
            #expect(recorded.body["refundPreference"] as? String == "GRANT_PRORATED")
        }
    }
}
