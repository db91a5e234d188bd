package import Core

/// Apple's signed renewal info read by hand, with the rules of ``JWSTransactionDecodedPayload``'s reader: the members
/// `Codable` reads, absent and `null` nil, a value of another type an error, Apple's enums lenient.
extension JWSRenewalInfoDecodedPayload: HandDecodedPayload {
    package init(json fields: JSONFields) throws(JSONError) {
        self.init()
        expirationIntent = try fields.optionalInt("expirationIntent").map(ExpirationIntent.init(rawValue:))
        originalTransactionId = try fields.optionalString("originalTransactionId")
        autoRenewProductId = try fields.optionalString("autoRenewProductId")
        productId = try fields.optionalString("productId")
        autoRenewStatus = try fields.optionalInt("autoRenewStatus").map(AutoRenewStatus.init(rawValue:))
        isInBillingRetryPeriod = try fields.optionalBool("isInBillingRetryPeriod")
        priceIncreaseStatus = try fields.optionalInt("priceIncreaseStatus").map(PriceIncreaseStatus.init(rawValue:))
        gracePeriodExpiresDate = try fields.optionalInt64("gracePeriodExpiresDate")
        offerType = try fields.optionalInt("offerType").map(OfferType.init(rawValue:))
        offerIdentifier = try fields.optionalString("offerIdentifier")
        offerDiscountType = try fields.optionalString("offerDiscountType").map(OfferDiscountType.init(rawValue:))
        offerPeriod = try fields.optionalString("offerPeriod")
        signedDate = try fields.optionalInt64("signedDate")
        environment = try fields.optionalString("environment").map(AppStoreEnvironment.init(rawValue:))
        recentSubscriptionStartDate = try fields.optionalInt64("recentSubscriptionStartDate")
        renewalDate = try fields.optionalInt64("renewalDate")
        currency = try fields.optionalString("currency")
        renewalPrice = try fields.optionalInt64("renewalPrice")
        eligibleWinBackOfferIds = try fields.optionalStrings("eligibleWinBackOfferIds")
        appAccountToken = try fields.optionalString("appAccountToken")
        appTransactionId = try fields.optionalString("appTransactionId")
        renewalBillingPlanType = try fields.optionalString("renewalBillingPlanType")
        commitmentInfo = fields.optionalValue("commitmentInfo")
        advancedCommerceInfo = fields.optionalValue("advancedCommerceInfo")
    }
}
