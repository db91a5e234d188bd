/// The renewal state of an auto-renewable subscription, signed by the App Store
/// (Apple's `JWSRenewalInfoDecodedPayload`). It carries no bundle ID.
public struct JWSRenewalInfoDecodedPayload: SignedPayload, Codable, Hashable {
    public var expirationIntent: ExpirationIntent?
    public var originalTransactionId: String?
    public var autoRenewProductId: String?
    public var productId: String?
    public var autoRenewStatus: AutoRenewStatus?
    public var isInBillingRetryPeriod: Bool?
    public var priceIncreaseStatus: PriceIncreaseStatus?
    public var gracePeriodExpiresDate: Int64?
    public var offerType: OfferType?
    public var offerIdentifier: String?
    public var offerDiscountType: OfferDiscountType?
    public var offerPeriod: String?
    public var signedDate: Int64?
    public var environment: AppStoreEnvironment?
    public var recentSubscriptionStartDate: Int64?
    public var renewalDate: Int64?
    public var currency: String?
    public var renewalPrice: Int64?
    public var eligibleWinBackOfferIds: [String]?
    public var appAccountToken: String?
    public var appTransactionId: String?

    public init(
        originalTransactionId: String? = nil, autoRenewProductId: String? = nil, productId: String? = nil,
        autoRenewStatus: AutoRenewStatus? = nil, expirationIntent: ExpirationIntent? = nil,
        isInBillingRetryPeriod: Bool? = nil, gracePeriodExpiresDate: Int64? = nil, signedDate: Int64? = nil,
        environment: AppStoreEnvironment? = nil, renewalDate: Int64? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.autoRenewProductId = autoRenewProductId
        self.productId = productId
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.signedDate = signedDate
        self.environment = environment
        self.renewalDate = renewalDate
    }
}
