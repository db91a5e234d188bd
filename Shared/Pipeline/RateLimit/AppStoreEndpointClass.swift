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

    /// The bucket of this class for one app (`bundleId`, as Apple counts per app: two apps of a deployment have a
    /// budget each, even when they share one team-wide key): its key under `prefix`
    /// (`tg:{rl:<class>}:<production|sandbox>:<bundleId>`), its rate for the environment (`sandbox` gets 10 %), one
    /// second of burst. Without a bundle ID, the class's bucket of no app in particular (tests, tools).
    package func bucket(prefix: String, sandbox: Bool, rateScale: Double = 1, bundleId: String? = nil) -> TokenBucket {
        let rate = productionRatePerSecond * (sandbox ? Self.sandboxShare : 1) * rateScale
        return TokenBucket(
            key: "\(prefix):{rl:\(rawValue)}:\(sandbox ? "sandbox" : "production")" + (bundleId.map { ":" + $0 } ?? ""),
            ratePerSecond: rate, capacity: max(1, rate.rounded(.down)))
    }
}
