/// The latest transactions of one subscription group: Apple's `SubscriptionGroupIdentifierItem`.
package struct SubscriptionGroupIdentifierItem: Codable, Sendable, Hashable {
    package var subscriptionGroupIdentifier: String?
    package var lastTransactions: [LastTransactionsItem]?

    package init(subscriptionGroupIdentifier: String? = nil, lastTransactions: [LastTransactionsItem]? = nil) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.lastTransactions = lastTransactions
    }
}
