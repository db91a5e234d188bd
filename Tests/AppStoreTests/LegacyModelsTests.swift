import Foundation
import TestSupport
import Testing

@testable import AppStore

/// The legacy fixtures in `Tests/Fixtures/legacy`.
enum LegacyFixture {
    static let directory = Vectors.legacy

    static let ios6 = "verifyreceipt-ios6-style-transaction-receipt.json"
    static let ios7 = "verifyreceipt-ios7-app-receipt-non-consumable.json"
    static let renewed = "verifyreceipt-auto-renewable-subscription-renewed.json"
    static let notification = "server-notification-v1-cancel.json"

    static func data(_ name: String) throws -> Data {
        try Data(contentsOf: directory.appendingPathComponent(name))
    }

    static func text(_ name: String) throws -> String {
        String(decoding: try data(name), as: UTF8.self)
    }

    static func response(_ name: String) throws -> VerifyReceiptResponse {
        try JSONDecoder().decode(VerifyReceiptResponse.self, from: data(name))
    }

    static func millis(_ value: Int64) -> Date {
        Date(timeIntervalSince1970: TimeInterval(value) / 1000)
    }
}

@Suite struct LegacyModelsTests {
    @Test func allFourFixturesDecode() throws {
        for name in [LegacyFixture.ios6, LegacyFixture.ios7, LegacyFixture.renewed] {
            let response = try LegacyFixture.response(name)
            #expect(response.status == 0, "\(name)")
            #expect(response.receipt != nil, "\(name)")
        }
        let notification = try JSONDecoder().decode(
            ServerNotificationV1.self, from: LegacyFixture.data(LegacyFixture.notification))
        #expect(notification.notificationType == "CANCEL")
        #expect(notification.unifiedReceipt?.latestReceiptInfo.count == 3)
    }

    @Test func iOS6ReceiptKeepsTopLevelTransaction() throws {
        let response = try LegacyFixture.response(LegacyFixture.ios6)
        let receipt = try #require(response.receipt)
        #expect(receipt.bid == "com.huochai.main")
        #expect(receipt.bvrs == "10")
        #expect(receipt.itemId == "1581250870")
        #expect(receipt.bundleId == nil)
        #expect(receipt.inApp.isEmpty)
        let top = try #require(receipt.transaction)
        #expect(top.transactionId == "1000000859439868")
        #expect(top.quantity == 1)
        #expect(top.purchaseDate == LegacyFixture.millis(1_628_944_097_586))
    }

    @Test func iOS6ReceiptNormalizes() throws {
        let response = try LegacyFixture.response(LegacyFixture.ios6)
        let result = ReceiptNormalizer.normalize(response: response, answeredBy: .production, expectedBundleId: "com.huochai.main")
        let verified = try #require(result.value)
        #expect(verified.environment == .production)
        #expect(verified.bundleId == "com.huochai.main")
        #expect(verified.transactions.count == 1)
        let transaction = try #require(verified.transactions.first)
        #expect(transaction.transactionId == "1000000859439868")
        #expect(transaction.originalTransactionId == "1000000859439868")
        #expect(transaction.productId == "10002")
        #expect(transaction.quantity == 1)
        #expect(transaction.purchaseDate == LegacyFixture.millis(1_628_944_097_586))
        #expect(transaction.originalPurchaseDate == LegacyFixture.millis(1_628_944_097_586))
        #expect(transaction.expiresDate == nil)
        #expect(transaction.inAppOwnershipType == .purchased)
        #expect(transaction.renewal == nil)
    }

    @Test func iOS7ReceiptNormalizesAndDeduplicates() throws {
        let response = try LegacyFixture.response(LegacyFixture.ios7)
        #expect(response.receipt?.inApp.count == 8)
        #expect(response.latestReceiptInfo.count == 8)
        let verified = try #require(
            ReceiptNormalizer.normalize(response: response, answeredBy: .sandbox, expectedBundleId: "com.foo.foo").value)
        #expect(verified.environment == .sandbox)
        #expect(verified.transactions.count == 8)
        #expect(Set(verified.transactions.map(\.transactionId)).count == 8)
        #expect(verified.transactions.map(\.transactionId).first == "1000000741421650")

        let nonConsumable = try #require(verified.transactions.first { $0.productId == "nonconsumable_test" })
        #expect(nonConsumable.transactionId == "1000000741428860")
        #expect(nonConsumable.expiresDate == nil)
        #expect(nonConsumable.renewal == nil)
        #expect(nonConsumable.purchaseDate == LegacyFixture.millis(1_605_231_967_000))

        let upgrade = try #require(verified.transactions.first { $0.transactionId == "1000000741424335" })
        #expect(upgrade.productId == "test_sub2")
        #expect(upgrade.originalTransactionId == "1000000741421650")
        #expect(upgrade.expiresDate == LegacyFixture.millis(1_605_231_270_000))
        #expect(upgrade.webOrderLineItemId == "1000000057350207")
        let renewal = try #require(upgrade.renewal)
        #expect(renewal.autoRenewStatus == AutoRenewStatus(rawValue: 0))
        #expect(renewal.autoRenewProductId == "test_sub2")
        #expect(renewal.expirationIntent == ExpirationIntent(rawValue: 1))
        #expect(renewal.isInBillingRetryPeriod == false)
        #expect(verified.renewals == [renewal])

        let first = try #require(verified.transactions.first)
        #expect(first.isTrialPeriod)
        #expect(first.renewal == renewal)
    }

    @Test func renewedSubscriptionNormalizesWithLatestPeriod() throws {
        let response = try LegacyFixture.response(LegacyFixture.renewed)
        #expect(response.latestReceipt?.hasPrefix("MIIf0wYJ") == true)
        let verified = try #require(
            ReceiptNormalizer.normalize(response: response, answeredBy: .sandbox, expectedBundleId: "com.foo.foo").value)
        #expect(verified.transactions.count == 9)
        let last = try #require(verified.transactions.last)
        #expect(last.transactionId == "1000000743044795")
        #expect(last.expiresDate == LegacyFixture.millis(1_605_642_883_000))
        #expect(last.renewal?.autoRenewStatus == AutoRenewStatus(rawValue: 1))
        #expect(last.renewal?.autoRenewProductId == "test_subscription")
        #expect(verified.latestReceipt == response.latestReceipt)
    }

    @Test func bundleMismatchIsRejected() throws {
        let response = try LegacyFixture.response(LegacyFixture.ios7)
        let result = ReceiptNormalizer.normalize(response: response, answeredBy: .sandbox, expectedBundleId: "com.example.app")
        guard case .rejected(let failure) = result else {
            Issue.record("expected a rejection, got \(result)")
            return
        }
        #expect(failure.code == .wrongBundleID)
    }

    /// Decoding only: the verifier reads a V1 notification's type, `bid` and `latest_receipt` (to ask Apple), never
    /// its transactions.
    @Test func v1NotificationDecodes() throws {
        let notification = try JSONDecoder().decode(
            ServerNotificationV1.self, from: LegacyFixture.data(LegacyFixture.notification))
        #expect(notification.notificationType == "CANCEL")
        #expect(notification.environment == .sandbox)
        #expect(notification.bid == "com.foo.foo")
        #expect(notification.latestReceipt?.hasPrefix("MIIXDwYJ") == true)
        #expect(notification.unifiedReceipt?.latestReceiptInfo.count == 3)

        let older = try JSONDecoder().decode(
            ServerNotificationV1.self,
            from: Data(
                #"""
                {"notification_type": "RENEWAL", "latest_receipt": "ewoJInNpZ25hdHVyZSI", "bid": "com.foo.foo"}
                """#.utf8))
        #expect(older.latestReceipt == "ewoJInNpZ25hdHVyZSI")
    }
}
