/// The App Store Server API endpoints grouped as Apple rate-limits them (per app, per endpoint).
///
/// Defaults: 50 requests per second for each class in production (Apple's published limit for the transaction and
/// history endpoints; docs/ARCHITECTURE.md §7), and 10 % of that in sandbox.
package enum AppStoreEndpointClass: String, Sendable, Hashable, CaseIterable {
    /// Get Transaction Info.
    case transactionInfo
    /// Get Transaction History.
    case transactionHistory
    /// Get All Subscription Statuses.
    case subscriptionStatus
    /// Send Consumption Information.
    case consumption
    /// Get Notification History.
    case notificationHistory
    /// Look Up Order ID, Get Refund History and the rest.
    case other

    /// Apple's production rate for this class, requests per second.
    package var productionRatePerSecond: Double { 50 }

    /// The sandbox share of the production rate.
    package static let sandboxShare = 0.1

    /// The default bucket of this class: its key under `prefix`, its rate for the environment (`sandbox`
    /// gets 10 %), one second of burst.
    package func bucket(prefix: String, sandbox: Bool, rateScale: Double = 1) -> TokenBucket {
        let rate = productionRatePerSecond * (sandbox ? Self.sandboxShare : 1) * rateScale
        return TokenBucket(
            key: "\(prefix):{rl:\(rawValue)}:\(sandbox ? "sandbox" : "production")",
            ratePerSecond: rate, capacity: max(1, rate.rounded(.down)))
    }
}
