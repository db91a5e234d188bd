/// The body of Extend Subscription Renewal Dates for All Active Subscribers: Apple's
/// `MassExtendRenewalDateRequest`.
package struct MassExtendRenewalDateRequest: Codable, Sendable, Hashable {
    package var extendByDays: Int
    package var extendReasonCode: Int
    package var requestIdentifier: String
    package var productId: String
    /// Only subscribers in these storefronts (ISO 3166-1 alpha-3); all when absent.
    package var storefrontCountryCodes: [String]?

    package init(
        extendByDays: Int, extendReasonCode: Int, requestIdentifier: String, productId: String,
        storefrontCountryCodes: [String]? = nil
    ) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
        self.productId = productId
        self.storefrontCountryCodes = storefrontCountryCodes
    }
}
