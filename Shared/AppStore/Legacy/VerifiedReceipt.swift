import Foundation

/// A receipt Apple vouched for, normalized: which environment answered, the app, and every purchase as a
/// canonical ``ReceiptTransaction`` (deduplicated by transaction ID, ordered by purchase date).
public struct VerifiedReceipt: Codable, Sendable, Hashable {
    /// The environment whose endpoint answered (for a V1 notification: the one it names).
    public var environment: AppStoreEnvironment
    /// Apple's status: `0`, or `21006` (valid, but the subscription has expired).
    public var status: Int
    public var bundleId: String
    public var transactions: [ReceiptTransaction]
    /// The renewal state of each subscription, from `pending_renewal_info`.
    public var renewals: [ReceiptRenewalState]
    /// Apple's latest base64 receipt, when it sent one.
    public var latestReceipt: String?

    /// Apple answered `21006`: the receipt is valid but its subscription has expired.
    public var isSubscriptionExpired: Bool { status == ReceiptStatus.subscriptionExpired }

    public init(
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
