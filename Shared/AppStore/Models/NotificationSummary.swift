/// The outcome of a subscription-renewal-date extension request for many customers (Apple's `Summary`).
public struct NotificationSummary: Codable, Hashable, Sendable {
    public var requestIdentifier: String?
    public var environment: AppStoreEnvironment?
    public var appAppleId: Int64?
    public var bundleId: String?
    public var productId: String?
    public var storefrontCountryCodes: [String]?
    public var failedCount: Int64?
    public var succeededCount: Int64?

    public init(environment: AppStoreEnvironment? = nil, appAppleId: Int64? = nil, bundleId: String? = nil) {
        self.environment = environment
        self.appAppleId = appAppleId
        self.bundleId = bundleId
    }
}
