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
/// - `inAppOwnershipType` — `PURCHASED` or `FAMILY_SHARED`.
/// - `appAccountToken` — the UUID the app attached at purchase (binds the purchase to a user or order).
/// - `webOrderLineItemId` — identifies a subscription period across devices.
/// - `signedDate` — when Apple signed it (JWS sources only).
/// - `isUpgraded` — the subscription was replaced by an upgrade and grants nothing.
/// - `offerType` — `1` introductory, `2` promotional, `3` offer code, `4` win-back.
public struct PurchaseEventTransaction: Codable, Sendable, Hashable {
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    public var productType: String?
    public var quantity: Int
    public var purchaseDate: Int64
    public var originalPurchaseDate: Int64?
    public var expiresDate: Int64?
    public var revocationDate: Int64?
    public var revocationReason: Int?
    public var inAppOwnershipType: String?
    public var appAccountToken: String?
    public var webOrderLineItemId: String?
    public var signedDate: Int64?
    public var isUpgraded: Bool?
    public var offerType: Int?

    public init(
        transactionId: String, originalTransactionId: String, productId: String, productType: String? = nil,
        quantity: Int = 1, purchaseDate: Int64, originalPurchaseDate: Int64? = nil, expiresDate: Int64? = nil,
        revocationDate: Int64? = nil, revocationReason: Int? = nil, inAppOwnershipType: String? = nil,
        appAccountToken: String? = nil, webOrderLineItemId: String? = nil, signedDate: Int64? = nil,
        isUpgraded: Bool? = nil, offerType: Int? = nil
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
    }
}
