/// The latest transactions of one subscription group: Apple's `SubscriptionGroupIdentifierItem`.
public struct SubscriptionGroupIdentifierItem: Codable, Sendable, Hashable {
    public var subscriptionGroupIdentifier: String?
    public var lastTransactions: [LastTransactionsItem]?

    public init(subscriptionGroupIdentifier: String? = nil, lastTransactions: [LastTransactionsItem]? = nil) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.lastTransactions = lastTransactions
    }
}
