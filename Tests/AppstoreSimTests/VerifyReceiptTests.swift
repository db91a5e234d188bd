import AppStore
import Foundation
import HTTPClient
import Testing

@testable import appstore_sim

@Suite("verifyReceipt")
struct VerifyReceiptTests {
    /// A client of the simulator's `verifyReceipt`; its timeout is generous, CI machines being slow and shared.
    func client(_ sim: SimHarness, allowSandbox: Bool = true, startInSandbox: Bool = false, secret: String? = nil) -> ReceiptClient {
        ReceiptClient(
            configuration: ReceiptClientConfiguration(
                bundleId: "com.example.app", sharedSecret: secret,
                productionURL: sim.url("/verifyReceipt"), sandboxURL: sim.url("/sandbox/verifyReceipt"),
                allowSandbox: allowSandbox, startInSandbox: startInSandbox, timeout: .seconds(20)))
    }

    @Test func productionPurchaseVerifiesAtProduction() async throws {
        try await SimHarness.with { sim in
            let purchase = try await sim.purchase(extra: ["quantity": 3])
            let verification = await client(sim).verify(purchase.receipt)
            let receipt = try #require(verification.result.value)
            #expect(receipt.environment == .production)
            #expect(verification.environmentsCalled == [.production])
            let transaction = try #require(receipt.transactions.first)
            #expect(transaction.transactionId == purchase.transactionId)
            #expect(transaction.productId == "com.example.coins100")
            #expect(transaction.quantity == 3)
            #expect(try await sim.requestCount("verifyReceipt.production") == 1)
            #expect(try await sim.requestCount("verifyReceipt.sandbox") == 0)
        }
    }

    @Test func sandboxReceiptIsSentBackWith21007ThenVerifiesAtSandbox() async throws {
        try await SimHarness.with { sim in
            let purchase = try await sim.purchase(environment: "Sandbox")
            let raw = try await sim.post("/verifyReceipt", ["receipt-data": purchase.receipt])
            #expect(raw.body["status"] as? Int == 21007)
            let verification = await client(sim).verify(purchase.receipt)
            let receipt = try #require(verification.result.value)
            #expect(receipt.environment == .sandbox)
            #expect(verification.environmentsCalled == [.production, .sandbox])
            #expect(receipt.transactions.map(\.transactionId) == [purchase.transactionId])
            #expect(try await sim.requestCount("verifyReceipt.production") == 2)
            #expect(try await sim.requestCount("verifyReceipt.sandbox") == 1)
        }
    }

    @Test func productionReceiptAtSandboxAnswers21008() async throws {
        try await SimHarness.with { sim in
            let purchase = try await sim.purchase()
            let raw = try await sim.post("/sandbox/verifyReceipt", ["receipt-data": purchase.receipt])
            #expect(raw.body["status"] as? Int == 21008)
            let verification = await client(sim, startInSandbox: true).verify(purchase.receipt)
            #expect(verification.environmentsCalled == [.sandbox, .production])
            #expect(verification.result.value?.environment == .production)
        }
    }

    @Test func garbageUnknownAndWrongPasswordAreRefusedWithApplesStatuses() async throws {
        let settings: (inout SimConfiguration) -> Void = { $0.sharedSecret = "s3cret" }
        try await SimHarness.with(settings) { sim in
            let purchase = try await sim.purchase()
            let garbage = try await sim.post("/verifyReceipt", ["receipt-data": "not base64 at all!!", "password": "s3cret"])
            #expect(garbage.body["status"] as? Int == 21002)
            let notJSON = try await sim.send(.post, "/verifyReceipt", body: Data("{{{".utf8))
            #expect(notJSON.status == 200)
            #expect(String(decoding: notJSON.body, as: UTF8.self).contains("21002"))
            let randomBytes = Data((0..<48).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            #expect(
                try await sim.post("/verifyReceipt", ["receipt-data": randomBytes])
                    .body["status"] as? Int == 21002)
            let unknown = SimReceiptToken.make(environment: .production)
            #expect(try await sim.post("/verifyReceipt", ["receipt-data": unknown, "password": "s3cret"]).body["status"] as? Int == 21003)
            #expect(
                try await sim.post("/verifyReceipt", ["receipt-data": purchase.receipt, "password": "wrong"]).body["status"] as? Int
                    == 21004)
            #expect(try await sim.post("/verifyReceipt", ["receipt-data": purchase.receipt]).body["status"] as? Int == 21004)
            #expect(
                try await sim.post("/verifyReceipt", ["receipt-data": purchase.receipt, "password": "s3cret"]).body["status"] as? Int == 0)

            let wrongSecret = await client(sim, secret: "wrong").verify(purchase.receipt)
            #expect(wrongSecret.result.failure?.code == .sharedSecretMismatch)
            let notIssued = await client(sim, secret: "s3cret").verify(unknown)
            #expect(notIssued.result.failure?.code == .receiptNotAuthentic)
            let spaces = await client(sim, secret: "s3cret").verify(purchase.receipt.replacingOccurrences(of: "+", with: " "))
            #expect(spaces.result.value != nil, "\(String(describing: spaces.result.failure))")
        }
    }

    @Test func receiptShowsRenewalsRefundsAndRenewalState() async throws {
        try await SimHarness.with { sim in
            let purchase = try await sim.purchase(type: "Auto-Renewable Subscription", productId: "com.example.vip.month")
            let renewed = try await sim.event("DID_RENEW", purchase.transactionId)
            let renewalId = try #require(renewed["transactionId"] as? String)
            try await sim.event("REFUND", renewalId, extra: ["revocationReason": 1])
            try await sim.event("DID_CHANGE_RENEWAL_STATUS", purchase.transactionId, subtype: "AUTO_RENEW_DISABLED")

            let raw = try await sim.post("/verifyReceipt", ["receipt-data": purchase.receipt])
            // The app receipt is PKCS#7; `latest_receipt` names the same receipt by the token it carries.
            #expect(raw.body["latest_receipt"] as? String == SimReceiptToken.normalize(purchase.receipt))
            let latest = try #require(raw.body["latest_receipt_info"] as? [[String: Any]])
            #expect(latest.count == 2)
            let refundedEntry = try #require(latest.first { $0["transaction_id"] as? String == renewalId })
            let cancellationText = try #require(refundedEntry["cancellation_date"] as? String)
            #expect(cancellationText.hasSuffix(" Etc/GMT"))
            #expect(refundedEntry["cancellation_date_ms"] is String)
            #expect(refundedEntry["cancellation_reason"] as? String == "1")

            let receipt = try #require(await client(sim).verify(purchase.receipt).result.value)
            #expect(receipt.transactions.map(\.transactionId) == [purchase.transactionId, renewalId])
            #expect(receipt.transactions[0].revocationDate == nil)
            #expect(receipt.transactions[1].revocationDate != nil)
            #expect(receipt.transactions[1].expiresDate ?? .distantPast > receipt.transactions[0].expiresDate ?? .distantFuture)
            #expect(receipt.renewals.first?.autoRenewStatus == .off)
        }
    }

    @Test func legacyIOS6ShapeDecodesToTheTransaction() async throws {
        let settings: (inout SimConfiguration) -> Void = { $0.legacyIOS6 = true }
        try await SimHarness.with(settings) { sim in
            let purchase = try await sim.purchase(type: "Non-Consumable", productId: "com.example.noads")
            let raw = try await sim.post("/verifyReceipt", ["receipt-data": purchase.receipt])
            let top = try #require(raw.body["receipt"] as? [String: Any])
            #expect(top["bid"] as? String == "com.example.app")
            #expect(top["transaction_id"] as? String == purchase.transactionId)
            #expect(top["in_app"] == nil)
            let receipt = try #require(await client(sim).verify(purchase.receipt).result.value)
            #expect(receipt.transactions.map(\.transactionId) == [purchase.transactionId])
            #expect(receipt.transactions.first?.productId == "com.example.noads")
        }
    }
}
