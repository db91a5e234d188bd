import Foundation

/// One purchase from a legacy receipt (`in_app`, `latest_receipt_info`, an iOS 6 receipt or a V1
/// notification's `unified_receipt`) in Tollgate's canonical form, named like the V2 transaction fields.
public struct ReceiptTransaction: Codable, Sendable, Hashable {
    public var transactionId: String
    public var originalTransactionId: String
    public var productId: String
    /// Number of items bought; `1` when Apple omits it.
    public var quantity: Int
    public var purchaseDate: Date
    public var originalPurchaseDate: Date?
    /// Set for subscriptions: the end of the period this transaction paid for.
    public var expiresDate: Date?
    /// Apple's `cancellation_date`: when the purchase was refunded or revoked.
    public var revocationDate: Date?
    /// Apple's `cancellation_reason`.
    public var revocationReason: RevocationReason?
    public var webOrderLineItemId: String?
    public var isTrialPeriod: Bool
    public var isInIntroOfferPeriod: Bool
    /// The subscription was replaced by an upgrade; it no longer grants anything.
    public var isUpgraded: Bool
    public var inAppOwnershipType: InAppOwnershipType?
    public var subscriptionGroupIdentifier: String?
    public var appAccountToken: String?
    /// The environment that answered for this receipt.
    public var environment: AppStoreEnvironment
    /// For subscriptions, the renewal state from `pending_renewal_info` for ``originalTransactionId``.
    public var renewal: ReceiptRenewalState?

    /// Whether this is a subscription period (it has an expiry date).
    public var isSubscription: Bool { expiresDate != nil }

    public init(
        transactionId: String, originalTransactionId: String, productId: String, quantity: Int = 1,
        purchaseDate: Date, originalPurchaseDate: Date? = nil, expiresDate: Date? = nil,
        revocationDate: Date? = nil, revocationReason: RevocationReason? = nil, webOrderLineItemId: String? = nil,
        isTrialPeriod: Bool = false, isInIntroOfferPeriod: Bool = false, isUpgraded: Bool = false,
        inAppOwnershipType: InAppOwnershipType? = nil, subscriptionGroupIdentifier: String? = nil,
        appAccountToken: String? = nil, environment: AppStoreEnvironment, renewal: ReceiptRenewalState? = nil
    ) {
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.webOrderLineItemId = webOrderLineItemId
        self.isTrialPeriod = isTrialPeriod
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
        self.isUpgraded = isUpgraded
        self.inAppOwnershipType = inAppOwnershipType
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.appAccountToken = appAccountToken
        self.environment = environment
        self.renewal = renewal
    }

    /// The canonical form of a legacy transaction; `nil` when it lacks a transaction ID, product ID or
    /// purchase date (nothing could be credited for it).
    public init?(_ legacy: LegacyTransaction, environment: AppStoreEnvironment) {
        guard let transactionId = legacy.transactionId, !transactionId.isEmpty,
              let productId = legacy.productId, !productId.isEmpty,
              let purchaseDate = legacy.purchaseDate
        else { return nil }
        self.init(
            transactionId: transactionId,
            originalTransactionId: legacy.originalTransactionId ?? transactionId,
            productId: productId,
            quantity: max(1, legacy.quantity ?? 1),
            purchaseDate: purchaseDate,
            originalPurchaseDate: legacy.originalPurchaseDate,
            expiresDate: legacy.expiresDate,
            revocationDate: legacy.cancellationDate,
            revocationReason: legacy.cancellationReason.map(RevocationReason.init(rawValue:)),
            webOrderLineItemId: legacy.webOrderLineItemId,
            isTrialPeriod: legacy.isTrialPeriod ?? false,
            isInIntroOfferPeriod: legacy.isInIntroOfferPeriod ?? false,
            isUpgraded: legacy.isUpgraded ?? false,
            inAppOwnershipType: legacy.inAppOwnershipType.map(InAppOwnershipType.init(rawValue:)),
            subscriptionGroupIdentifier: legacy.subscriptionGroupIdentifier,
            appAccountToken: legacy.appAccountToken,
            environment: environment
        )
    }
}
