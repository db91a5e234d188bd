/// One purchase in a ``PurchaseEvent``, in Tollgate's canonical form, named like Apple's V2 transaction
/// fields whatever the source (receipt, StoreKit 2 JWS, notification).
///
/// JSON fields (dates in milliseconds since 1970; absent optionals omitted):
/// - `transactionId` — Apple's transaction id; the ledger applies each at most once.
/// - `originalTransactionId` — the first transaction of a subscription or restore chain (equals
///   `transactionId` otherwise).
/// - `productId` — the App Store product id.
/// - `productType` — Apple's V2 type string (`Consumable`, `Non-Consumable`,
///   `Auto-Renewable Subscription`, `Non-Renewing Subscription`); absent for receipt transactions, whose
///   type Apple does not state (the catalog decides).
/// - `quantity` — items bought (≥ 1).
/// - `purchaseDate`, `originalPurchaseDate`.
/// - `expiresDate` — end of the paid subscription period (subscriptions only).
/// - `revocationDate`, `revocationReason` — set when refunded or revoked (`0` other, `1` app issue).
/// - `revocationType` — Apple's `REFUND_FULL`, `REFUND_PRORATED` or `FAMILY_REVOKE` (JWS sources only).
/// - `revocationPercentage` — the share Apple refunded or revoked in milli-percent, `0`–`100000`
///   (`100000` is all of it, for the whole quantity); set with `revocationType` (JWS sources only).
/// - `price`, `currency` — what the customer paid, in milliunits of the ISO 4217 `currency` (JWS sources only).
/// - `storefront` — Apple's three-letter code of the customer's App Store country (JWS sources only).
/// - `appTransactionId` — the customer's app download transaction (JWS sources only).
/// - `inAppOwnershipType` — `PURCHASED` or `FAMILY_SHARED`.
/// - `appAccountToken` — the UUID the app attached at purchase (binds the purchase to a user or order).
/// - `webOrderLineItemId` — identifies a subscription period across devices.
/// - `signedDate` — when Apple signed it (JWS sources only).
/// - `isUpgraded` — the subscription was replaced by an upgrade and grants nothing.
/// - `offerType` — `1` introductory, `2` promotional, `3` offer code, `4` win-back.
/// - `offerIdentifier` — the promotional offer's identifier, or the offer code's reference name.
/// - `offerDiscountType` — Apple's `FREE_TRIAL`, `PAY_AS_YOU_GO`, `PAY_UP_FRONT` or `ONE_TIME` (`FREE_TRIAL` for a
///   receipt's trial period; absent when Apple did not say).
package struct PurchaseEventTransaction: Codable, Sendable, Hashable {
    package var transactionId: String
    package var originalTransactionId: String
    package var productId: String
    package var productType: String?
    package var quantity: Int
    package var purchaseDate: Int64
    package var originalPurchaseDate: Int64?
    package var expiresDate: Int64?
    package var revocationDate: Int64?
    package var revocationReason: Int?
    package var inAppOwnershipType: String?
    package var appAccountToken: String?
    package var webOrderLineItemId: String?
    package var signedDate: Int64?
    package var isUpgraded: Bool?
    package var offerType: Int?
    package var revocationType: String?
    package var revocationPercentage: Int?
    package var price: Int64?
    package var currency: String?
    package var appTransactionId: String?
    package var offerIdentifier: String?
    package var offerDiscountType: String?
    package var storefront: String?

    package init(
        transactionId: String, originalTransactionId: String, productId: String, productType: String? = nil,
        quantity: Int = 1, purchaseDate: Int64, originalPurchaseDate: Int64? = nil, expiresDate: Int64? = nil,
        revocationDate: Int64? = nil, revocationReason: Int? = nil, inAppOwnershipType: String? = nil,
        appAccountToken: String? = nil, webOrderLineItemId: String? = nil, signedDate: Int64? = nil,
        isUpgraded: Bool? = nil, offerType: Int? = nil, revocationType: String? = nil,
        revocationPercentage: Int? = nil, price: Int64? = nil, currency: String? = nil, appTransactionId: String? = nil,
        offerIdentifier: String? = nil, offerDiscountType: String? = nil, storefront: String? = nil
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.productType = productType
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.inAppOwnershipType = inAppOwnershipType
        self.appAccountToken = appAccountToken
        self.webOrderLineItemId = webOrderLineItemId
        self.signedDate = signedDate
        self.isUpgraded = isUpgraded
        self.offerType = offerType
        self.revocationType = revocationType
        self.revocationPercentage = revocationPercentage
        self.price = price
        self.currency = currency
        self.appTransactionId = appTransactionId
        self.offerIdentifier = offerIdentifier
        self.offerDiscountType = offerDiscountType
        self.storefront = storefront
    }
}
