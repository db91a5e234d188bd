package import Core

/// A transaction signed by the App Store (Apple's `JWSTransactionDecodedPayload`).
///
/// Dates are Apple's milliseconds since 1970; prices are in milliunits of `currency`. Unknown fields are
/// ignored; the verifier keeps the original JSON next to this value.
package struct JWSTransactionDecodedPayload: SignedPayload, Codable, Hashable {
    package var originalTransactionId: String?
    package var transactionId: String?
    package var webOrderLineItemId: String?
    package var bundleId: String?
    package var productId: String?
    package var subscriptionGroupIdentifier: String?
    package var purchaseDate: Int64?
    package var originalPurchaseDate: Int64?
    package var expiresDate: Int64?
    package var quantity: Int?
    package var type: ProductType?
    package var appAccountToken: String?
    package var inAppOwnershipType: InAppOwnershipType?
    package var signedDate: Int64?
    package var revocationReason: RevocationReason?
    package var revocationDate: Int64?
    package var revocationType: RevocationType?
    package var revocationPercentage: Int?
    package var isUpgraded: Bool?
    package var offerType: OfferType?
    package var offerIdentifier: String?
    package var offerDiscountType: OfferDiscountType?
    package var offerPeriod: String?
    package var environment: AppStoreEnvironment?
    package var storefront: String?
    package var storefrontId: String?
    package var transactionReason: TransactionReason?
    package var currency: String?
    package var price: Int64?
    package var appTransactionId: String?
    /// The original transaction ID of a subscription before Apple migrated it (Apple's
    /// `previousOriginalTransactionId`).
    package var previousOriginalTransactionId: String?
    /// How a subscription with a commitment is billed, as Apple names it (Apple's `billingPlanType`).
    package var billingPlanType: String?
    /// A monthly subscription's 12-month commitment (Apple's `TransactionCommitmentInfo`), as sent.
    package var commitmentInfo: JSONValue?
    /// Advanced Commerce API data (Apple's `advancedCommerceInfo`), as sent.
    package var advancedCommerceInfo: JSONValue?

    package init(
        originalTransactionId: String? = nil, transactionId: String? = nil, webOrderLineItemId: String? = nil,
        bundleId: String? = nil, productId: String? = nil, subscriptionGroupIdentifier: String? = nil,
        purchaseDate: Int64? = nil, originalPurchaseDate: Int64? = nil, expiresDate: Int64? = nil,
        quantity: Int? = nil, type: ProductType? = nil, appAccountToken: String? = nil,
        inAppOwnershipType: InAppOwnershipType? = nil, signedDate: Int64? = nil,
        revocationReason: RevocationReason? = nil, revocationDate: Int64? = nil, isUpgraded: Bool? = nil,
        offerType: OfferType? = nil, offerIdentifier: String? = nil, environment: AppStoreEnvironment? = nil,
        storefront: String? = nil, storefrontId: String? = nil, transactionReason: TransactionReason? = nil,
        currency: String? = nil, price: Int64? = nil, appTransactionId: String? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.bundleId = bundleId
        self.productId = productId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.quantity = quantity
        self.type = type
        self.appAccountToken = appAccountToken
        self.inAppOwnershipType = inAppOwnershipType
        self.signedDate = signedDate
        self.revocationReason = revocationReason
        self.revocationDate = revocationDate
        self.isUpgraded = isUpgraded
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.environment = environment
        self.storefront = storefront
        self.storefrontId = storefrontId
        self.transactionReason = transactionReason
        self.currency = currency
        self.price = price
        self.appTransactionId = appTransactionId
    }
}
