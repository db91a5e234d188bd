package import Core

/// The renewal state of an auto-renewable subscription, signed by the App Store
/// (Apple's `JWSRenewalInfoDecodedPayload`). It carries no bundle ID.
package struct JWSRenewalInfoDecodedPayload: SignedPayload, Codable, Hashable {
    package var expirationIntent: ExpirationIntent?
    package var originalTransactionId: String?
    package var autoRenewProductId: String?
    package var productId: String?
    package var autoRenewStatus: AutoRenewStatus?
    package var isInBillingRetryPeriod: Bool?
    package var priceIncreaseStatus: PriceIncreaseStatus?
    package var gracePeriodExpiresDate: Int64?
    package var offerType: OfferType?
    package var offerIdentifier: String?
    package var offerDiscountType: OfferDiscountType?
    package var offerPeriod: String?
    package var signedDate: Int64?
    package var environment: AppStoreEnvironment?
    package var recentSubscriptionStartDate: Int64?
    package var renewalDate: Int64?
    package var currency: String?
    package var renewalPrice: Int64?
    package var eligibleWinBackOfferIds: [String]?
    package var appAccountToken: String?
    package var appTransactionId: String?
    /// How the next period of a subscription with a commitment is billed (Apple's `renewalBillingPlanType`).
    package var renewalBillingPlanType: String?
    /// The renewal's commitment (Apple's `RenewalCommitmentInfo`), as sent.
    package var commitmentInfo: JSONValue?
    /// Advanced Commerce API renewal data (Apple's `advancedCommerceInfo`), as sent.
    package var advancedCommerceInfo: JSONValue?

    package init(
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
