import AppStore
import AppStoreTesting
import Foundation
import HTTPClient
import Ledger
import Logging
import Redis
import TestSupport
import Testing

extension TollgateSystemTests {
    /// What an attacker with a real but cheap (or someone else's) purchase cannot do.
    @Suite struct FraudTests {
        @Test(.logsOnFailure) func aCheapTransactionCannotPayAnExpensiveOrderAndAnOrderIsPaidOnce() async throws {
            let system = try SystemHarness.require()
            let ingest = system.ingestClient
            let sim = system.simClient
            let user = UserToken.newUser("fraud")
            let order = try await ingest.createOrder(user: user, productId: "com.example.coins2000")
            let cheap = try await sim.purchase("com.example.coins100", type: "Consumable")

            let viaReceipt = try await ingest.submitReceipt(user: user, receipt: try #require(cheap.receipt), orderNo: order.orderNo)
            #expect(viaReceipt.status == "rejected", "\(viaReceipt)")
            #expect(viaReceipt.reason == "product_mismatch", "\(viaReceipt)")
            let viaJWS = try await ingest.submitTransaction(user: user, signedTransaction: cheap.signedTransaction, orderNo: order.orderNo)
            #expect(viaJWS.reason == "product_mismatch", "\(viaJWS)")
            #expect(try await ingest.entitlements(user: user).coins == 0)

            // The real payment for the order.
            let real = try await sim.purchase("com.example.coins2000", type: "Consumable", appAccountToken: order.appAccountToken)
            let paid = try await ingest.submitTransaction(user: user, signedTransaction: real.signedTransaction, orderNo: order.orderNo)
            #expect(paid.status == "fulfilled", "\(paid)")
            try await system.awaitCoins(user, 2000)
            // Paid once: a transaction bought for one order cannot pay a second, and its receipt adds nothing.
            let second = try await ingest.createOrder(user: user, productId: "com.example.coins2000")
            let reused = try await ingest.submitReceipt(user: user, receipt: try #require(real.receipt), orderNo: second.orderNo)
            #expect(reused.status == "rejected", "\(reused)")
            #expect(reused.reason == "wrong_order", "\(reused)")
            // Bought without a token, it pays the order it is first submitted with, and no other.
            let untokened = try await sim.purchase("com.example.coins2000", type: "Consumable")
            let paidSecond = try await ingest.submitTransaction(
                user: user, signedTransaction: untokened.signedTransaction,
                orderNo: second.orderNo)
            #expect(paidSecond.status == "fulfilled", "\(paidSecond)")
            let third = try await ingest.createOrder(user: user, productId: "com.example.coins2000")
            let usedTwice = try await ingest.submitTransaction(
                user: user, signedTransaction: untokened.signedTransaction,
                orderNo: third.orderNo)
            #expect(usedTwice.reason == "transaction_already_used", "\(usedTwice)")
            try await system.awaitCoins(user, 4000)
            let replay = try await ingest.submitReceipt(user: user, receipt: try #require(real.receipt), orderNo: order.orderNo)
            #expect(replay.status == "fulfilled", "\(replay)")
            #expect(replay.transactionResults == ["duplicate"], "\(replay)")
            #expect(try await ingest.entitlements(user: user).coins == 4000)

            let report = try await system.tollctlUser(user)
            #expect(report.contains("fraud:product_mismatch=2"), "\(report)")
            try await system.expectAuditClean()
        }

        @Test(.logsOnFailure) func anotherUserReplayingSomeonesPurchaseIsRefused() async throws {
            let system = try SystemHarness.require()
            let ingest = system.ingestClient
            let owner = UserToken.newUser("owner")
            let thief = UserToken.newUser("thief")
            let purchase = try await system.simClient.purchase("com.example.coins100", type: "Consumable")
            let bought = try await ingest.submitTransaction(user: owner, signedTransaction: purchase.signedTransaction)
            #expect(bought.status == "fulfilled", "\(bought)")
            try await system.awaitCoins(owner, 100)

            let stolenJWS = try await ingest.submitTransaction(user: thief, signedTransaction: purchase.signedTransaction)
            #expect(stolenJWS.status == "rejected", "\(stolenJWS)")
            #expect(stolenJWS.reason == "owned_by_another_user", "\(stolenJWS)")
            let stolenReceipt = try await ingest.submitReceipt(user: thief, receipt: try #require(purchase.receipt))
            #expect(stolenReceipt.reason == "owned_by_another_user", "\(stolenReceipt)")
            // Nor can the thief read the owner's ledger.
            let peek = try await ingest.send(.get, "/v1/users/\(owner)/entitlements", auth: .user(thief))
            #expect(peek.status == 403, "\(peek.text)")

            #expect(try await ingest.entitlements(user: thief).coins == 0)
            #expect(try await ingest.entitlements(user: owner).coins == 100)
            let report = try await system.tollctlUser(thief)
            #expect(report.contains("fraud:owned_by_another_user=2"), "\(report)")
            try await system.expectAuditClean()
        }

        /// Issue 13's first hole: bought with order O1's token, claimed as paying O2, then refunded by Apple.
        /// The claim is refused; once it pays O1, Apple's refund takes the coins back.
        @Test(.logsOnFailure) func aPurchaseForOneOrderCannotPayAnotherAndItsRefundIsApplied() async throws {
            let system = try SystemHarness.require()
            let ingest = system.ingestClient
            let sim = system.simClient
            let user = UserToken.newUser("evader")
            let o1 = try await ingest.createOrder(user: user, productId: "com.example.coins100")
            let o2 = try await ingest.createOrder(user: user, productId: "com.example.coins100")
            let purchase = try await sim.purchase("com.example.coins100", type: "Consumable", appAccountToken: o1.appAccountToken)

            let claim = try await ingest.submitTransaction(user: user, signedTransaction: purchase.signedTransaction, orderNo: o2.orderNo)
            #expect(claim.status == "rejected", "\(claim)")
            #expect(claim.reason == "wrong_order", "\(claim)")
            let viaReceipt = try await ingest.submitReceipt(user: user, receipt: try #require(purchase.receipt), orderNo: o2.orderNo)
            #expect(viaReceipt.reason == "wrong_order", "\(viaReceipt)")
            // The simulator's ONE_TIME_CHARGE notification credits it through O1's token meanwhile, or the app's claim
            // of O1 does: either way once.
            let paid = try await ingest.submitTransaction(user: user, signedTransaction: purchase.signedTransaction, orderNo: o1.orderNo)
            #expect(paid.status == "fulfilled", "\(paid)")
            try await system.awaitCoins(user, 100)

            _ = try await sim.event("REFUND", transactionId: purchase.transactionId)
            try await system.awaitCoins(user, 0)
            try await system.expectAuditClean()
        }

        /// Issue 13's second hole: a V1 notification with the right password and invented purchases. Tollgate
        /// credits only what Apple answers for its `latest_receipt` — here the user's real 100-coin purchase,
        /// not the 20 × 2000 coins the body claims — and a wrong password stores nothing.
        @Test(.logsOnFailure) func aForgedV1NotificationCreditsOnlyWhatAppleAnswers() async throws {
            let system = try SystemHarness.require()
            let ingest = system.ingestClient
            let user = UserToken.newUser("v1forger")
            let order = try await ingest.createOrder(user: user, productId: "com.example.coins100")
            let real = try await system.simClient.purchase(
                "com.example.coins100", type: "Consumable",
                appAccountToken: order.appAccountToken)
            func forged(password: String, receipt: String) throws -> Data {
                try JSONSerialization.data(
                    withJSONObject: [
                        "notification_type": "INITIAL_BUY", "password": password, "environment": "PROD",
                        "bid": SystemHarness.bundleId,
                        "unified_receipt": [
                            "environment": "Production", "status": 0, "latest_receipt": receipt,
                            "latest_receipt_info": [
                                [
                                    "transaction_id": "7\(Int.random(in: 100_000_000...999_999_999))", "quantity": "20",
                                    "original_transaction_id": "7000000001", "product_id": "com.example.coins2000",
                                    "purchase_date_ms": "1760000000000", "app_account_token": order.appAccountToken,
                                ]
                            ],
                        ],
                    ] as [String: Any])
            }
            let wrong = try await ingest.postNotification(try forged(password: "guess", receipt: try #require(real.receipt)))
            #expect(wrong.status == 401, "\(wrong.text)")
            let garbage = try await ingest.postNotification(
                try forged(password: SystemHarness.sharedSecret, receipt: "bm90IGEgcmVjZWlwdA=="))
            #expect(garbage.status == 200, "\(garbage.text)")
            let trigger = try await ingest.postNotification(
                try forged(
                    password: SystemHarness.sharedSecret,
                    receipt: try #require(real.receipt)))
            #expect(trigger.status == 200, "\(trigger.text)")
            let jobs = [garbage, trigger].compactMap {
                (try? JSONSerialization.jsonObject(with: $0.body) as? [String: Any])?["jobId"] as? String
            }
            #expect(jobs.count == 2)
            for job in jobs { _ = try await ingest.waitForJob(job, auth: .service) }
            try await system.awaitCoins(user, 100)
            #expect(try await ingest.entitlements(user: user).coins == 100)
            try await system.expectAuditClean()
        }

        /// Issue 13's fourth hole: strangers posting notifications. A genuine chain carrying a forged payload, or a
        /// chain to another root, is refused at ingest and leaves no key in Redis; a genuine notification
        /// replayed in other JSON is the job it already was.
        @Test(.logsOnFailure) func strangersNotificationsLeaveNothing() async throws {
            let system = try SystemHarness.require()
            let ingest = system.ingestClient
            let user = UserToken.newUser("flood")
            let order = try await ingest.createOrder(user: user, productId: "com.example.coins100")
            let genuine = try await system.simClient.purchase(
                "com.example.coins100", type: "Consumable",
                appAccountToken: order.appAccountToken)
            let segments = genuine.signedPayload.split(separator: ".")
            let claim = Base64URL.encode(Data(#"{"notificationType":"ONE_TIME_CHARGE","notificationUUID":"\#(UUID())","data":{}}"#.utf8))
            let forged = Data(#"{"signedPayload":"\#(segments[0]).\#(claim).\#(segments[2])"}"#.utf8)
            let stranger = try TestCertificateAuthority().signer().sign(json: Data(#"{"notificationType":"TEST"}"#.utf8))
            let strangers = Data(#"{"signedPayload":"\#(stranger)"}"#.utf8)

            _ = try await ingest.postNotification(genuine.notificationBody)  // the simulator's own delivery may race it
            try await system.awaitCoins(user, 100)
            for body in [forged, strangers] {
                for _ in 0..<20 {
                    let answer = try await ingest.postNotification(body)
                    #expect(answer.status == 401, "\(answer.text)")
                    #expect(answer.errorCode == "invalid_signature")
                }
            }
            var ids: Set<String> = []
            for wrapper in [
                #"{"signedPayload":"\#(genuine.signedPayload)","replay":1}"#, #"{ "signedPayload" : "\#(genuine.signedPayload)" }"#,
            ] {
                let answer = try await ingest.postNotification(Data(wrapper.utf8))
                #expect(answer.status == 200)
                ids.insert(answer.json["jobId"] as? String ?? "")
            }
            #expect(ids.count == 1, "a rewrapped replay is the same job")
            // Nothing of the strangers' bodies reached the jobs stream (other tests share this Redis, so its size says
            // nothing; the forged payloads are unique).
            let stored = try await system.redis.entries(of: "jobs").compactMap { $0.fields["job.payload"] }
                .map { String(decoding: $0, as: UTF8.self) }
            #expect(!stored.contains { $0.contains(claim) || $0.contains(stranger) }, "a stranger's notification was stored")
            #expect(try await ingest.entitlements(user: user).coins == 100)
            try await system.expectAuditClean()
        }
    }
}
