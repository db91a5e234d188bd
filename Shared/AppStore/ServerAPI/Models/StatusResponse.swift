/// The answer of Get All Subscription Statuses: Apple's `StatusResponse`.
package struct StatusResponse: Codable, Sendable, Hashable {
    package var environment: AppStoreEnvironment?
    package var bundleId: String?
    package var appAppleId: Int64?
    /// One entry per subscription group.
    package var data: [SubscriptionGroupIdentifierItem]?

    package init(
        environment: AppStoreEnvironment? = nil, bundleId: String? = nil, appAppleId: Int64? = nil,
        data: [SubscriptionGroupIdentifierItem]? = nil
    ) {
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.data = data
    }
}
