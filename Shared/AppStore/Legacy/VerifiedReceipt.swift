import Foundation

/// A receipt Apple vouched for, normalized: which environment answered, the app, and every purchase as a
/// canonical ``ReceiptTransaction`` (deduplicated by transaction ID, ordered by purchase date).
package struct VerifiedReceipt: Codable, Sendable, Hashable {
    /// The environment whose endpoint answered (for a V1 notification: the one it names).
    package var environment: AppStoreEnvironment
    /// Apple's status: `0`, or `21006` (valid, but the subscription has expired).
    package var status: Int
    package var bundleId: String
    package var transactions: [ReceiptTransaction]
    /// The renewal state of each subscription, from `pending_renewal_info`.
    package var renewals: [ReceiptRenewalState]
    /// Apple's latest base64 receipt, when it sent one.
    package var latestReceipt: String?

    /// Apple answered `21006`: the receipt is valid but its subscription has expired.
    package var isSubscriptionExpired: Bool { status == ReceiptStatus.subscriptionExpired }

    package init(
        environment: AppStoreEnvironment, status: Int, bundleId: String, transactions: [ReceiptTransaction],
        renewals: [ReceiptRenewalState], latestReceipt: String?
    ) {
        self.environment = environment
        self.status = status
        self.bundleId = bundleId
        self.transactions = transactions
        self.renewals = renewals
        self.latestReceipt = latestReceipt
    }
}
