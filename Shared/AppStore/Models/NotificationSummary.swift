/// The outcome of a subscription-renewal-date extension request for many customers (Apple's `Summary`).
package struct NotificationSummary: Codable, Hashable, Sendable {
    package var requestIdentifier: String?
    package var environment: AppStoreEnvironment?
    package var appAppleId: Int64?
    package var bundleId: String?
    package var productId: String?
    package var storefrontCountryCodes: [String]?
    package var failedCount: Int64?
    package var succeededCount: Int64?

    package init(environment: AppStoreEnvironment? = nil, appAppleId: Int64? = nil, bundleId: String? = nil) {
        self.environment = environment
        self.appAppleId = appAppleId
        self.bundleId = bundleId
    }
}
