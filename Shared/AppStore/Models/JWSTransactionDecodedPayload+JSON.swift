package import Core

/// Apple's signed transaction read by hand: the members `Codable` read, with the same rules (absent and `null` are
/// nil, a value of another type is an error, Apple's enums lenient).
extension JWSTransactionDecodedPayload: HandDecodedPayload {
    package init(json fields: JSONFields) throws(JSONError) {
        self.init()
        originalTransactionId = try fields.optionalString("originalTransactionId")
        transactionId = try fields.optionalString("transactionId")
        webOrderLineItemId = try fields.optionalString("webOrderLineItemId")
        bundleId = try fields.optionalString("bundleId")
        productId = try fields.optionalString("productId")
        subscriptionGroupIdentifier = try fields.optionalString("subscriptionGroupIdentifier")
        purchaseDate = try fields.optionalInt64("purchaseDate")
        originalPurchaseDate = try fields.optionalInt64("originalPurchaseDate")
        expiresDate = try fields.optionalInt64("expiresDate")
        quantity = try fields.optionalInt("quantity")
        type = try fields.optionalString("type").map(ProductType.init(rawValue:))
        appAccountToken = try fields.optionalString("appAccountToken")
        inAppOwnershipType = try fields.optionalString("inAppOwnershipType").map(InAppOwnershipType.init(rawValue:))
        signedDate = try fields.optionalInt64("signedDate")
        revocationReason = try fields.optionalInt("revocationReason").map(RevocationReason.init(rawValue:))
        revocationDate = try fields.optionalInt64("revocationDate")
        revocationType = try fields.optionalString("revocationType").map(RevocationType.init(rawValue:))
        revocationPercentage = try fields.optionalInt("revocationPercentage")
        isUpgraded = try fields.optionalBool("isUpgraded")
        offerType = try fields.optionalInt("offerType").map(OfferType.init(rawValue:))
        offerIdentifier = try fields.optionalString("offerIdentifier")
        offerDiscountType = try fields.optionalString("offerDiscountType").map(OfferDiscountType.init(rawValue:))
        offerPeriod = try fields.optionalString("offerPeriod")
        environment = try fields.optionalString("environment").map(AppStoreEnvironment.init(rawValue:))
        storefront = try fields.optionalString("storefront")
        storefrontId = try fields.optionalString("storefrontId")
        transactionReason = try fields.optionalString("transactionReason").map(TransactionReason.init(rawValue:))
        currency = try fields.optionalString("currency")
        price = try fields.optionalInt64("price")
        appTransactionId = try fields.optionalString("appTransactionId")
        previousOriginalTransactionId = try fields.optionalString("previousOriginalTransactionId")
        billingPlanType = try fields.optionalString("billingPlanType")
        commitmentInfo = fields.optionalValue("commitmentInfo")
        advancedCommerceInfo = fields.optionalValue("advancedCommerceInfo")
    }
}
