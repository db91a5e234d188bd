import Foundation
import Pipeline
import Testing

/// The canonical event's JSON: the contract the fulfiller reads.
struct PurchaseEventTests {
    @Test func encodesTheDocumentedFieldsAndOmitsAbsentOnes() throws {
        let event = PurchaseEvent(
            jobId: "j1", kind: .notificationV2, source: .apple, environment: "Sandbox", verifiedAt: 1_700_000_000_000,
            transactions: [
                PurchaseEventTransaction(
                    transactionId: "2", originalTransactionId: "1", productId: "com.example.vip.month",
                    productType: "Auto-Renewable Subscription", purchaseDate: 1_700_000_000_000, expiresDate: 1_702_592_000_000,
                    inAppOwnershipType: "PURCHASED", appAccountToken: "7e3fb20b-4cdb-47cc-936d-99d65f608138",
                    signedDate: 1_700_000_000_500, isUpgraded: false, offerType: 1)
            ],
            renewals: [PurchaseEventRenewal(originalTransactionId: "1", autoRenewStatus: 1, isInBillingRetryPeriod: false)],
            notification: PurchaseEventNotification(
                type: "DID_RENEW", subtype: "BILLING_RECOVERY",
                notificationUUID: "u-1", signedDate: 1_700_000_000_600, version: 2))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(event.encoded())) as? [String: Any])
        #expect(
            Set(json.keys) == [
                "version", "jobId", "kind", "source", "environment", "verifiedAt", "transactions", "renewals", "notification",
            ])
        #expect(json["version"] as? Int == 1)
        #expect(json["kind"] as? String == "notification.v2")
        #expect(json["source"] as? String == "apple")
        let transaction = try #require((json["transactions"] as? [[String: Any]])?.first)
        #expect(transaction["expiresDate"] as? Int64 == 1_702_592_000_000)
        #expect(transaction["quantity"] as? Int == 1)
        #expect(transaction["revocationDate"] == nil)
        let notification = try #require(json["notification"] as? [String: Any])
        #expect(notification["type"] as? String == "DID_RENEW")
        #expect(notification["notificationUUID"] as? String == "u-1")

        let fields = try event.streamFields()
        #expect(fields.map(\.0) == ["job.id", "event.version", "event"])
        #expect(try PurchaseEvent.decode(fields[2].1) == event)
    }
}
