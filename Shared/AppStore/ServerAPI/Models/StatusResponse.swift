/// The answer of Get All Subscription Statuses: Apple's `StatusResponse`.
public struct StatusResponse: Codable, Sendable, Hashable {
    public var environment: AppStoreEnvironment?
    public var bundleId: String?
    public var appAppleId: Int64?
    /// One entry per subscription group.
    public var data: [SubscriptionGroupIdentifierItem]?

    public init(
        environment: AppStoreEnvironment? = nil, bundleId: String? = nil, appAppleId: Int64? = nil,
        data: [SubscriptionGroupIdentifierItem]? = nil
    ) {
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.data = data
    }
}
