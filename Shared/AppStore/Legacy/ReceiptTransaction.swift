package import Foundation

/// One purchase from a legacy receipt (`in_app`, `latest_receipt_info`, an iOS 6 receipt or a V1
/// notification's `unified_receipt`) in Tollgate's canonical form, named like the V2 transaction fields.
package struct ReceiptTransaction: Codable, Sendable, Hashable {
    package var transactionId: String
    package var originalTransactionId: String
    package var productId: String
    /// Number of items bought; `1` when Apple omits it.
    package var quantity: Int
    package var purchaseDate: Date
    package var originalPurchaseDate: Date?
    /// Set for subscriptions: the end of the period this transaction paid for.
    package var expiresDate: Date?
    /// Apple's `cancellation_date`: when the purchase was refunded or revoked.
    package var revocationDate: Date?
    /// Apple's `cancellation_reason`.
    package var revocationReason: RevocationReason?
    package var webOrderLineItemId: String?
    package var isTrialPeriod: Bool
    package var isInIntroOfferPeriod: Bool
    /// The subscription was replaced by an upgrade; it no longer grants anything.
    package var isUpgraded: Bool
    package var inAppOwnershipType: InAppOwnershipType?
    package var subscriptionGroupIdentifier: String?
    package var appAccountToken: String?
    /// Apple's `promotional_offer_id`: the promotional offer this period was bought with.
    package var promotionalOfferId: String?
    /// Apple's `offer_code_ref_name`: the offer code's reference name this period was bought with.
    package var offerCodeRefName: String?
    /// The environment that answered for this receipt.
    package var environment: AppStoreEnvironment
    /// For subscriptions, the renewal state from `pending_renewal_info` for ``originalTransactionId``.
    package var renewal: ReceiptRenewalState?

    /// Whether this is a subscription period (it has an expiry date).
    package var isSubscription: Bool { expiresDate != nil }

    package init(
        transactionId: String, originalTransactionId: String, productId: String, quantity: Int = 1,
        purchaseDate: Date, originalPurchaseDate: Date? = nil, expiresDate: Date? = nil,
        revocationDate: Date? = nil, revocationReason: RevocationReason? = nil, webOrderLineItemId: String? = nil,
        isTrialPeriod: Bool = false, isInIntroOfferPeriod: Bool = false, isUpgraded: Bool = false,
        inAppOwnershipType: InAppOwnershipType? = nil, subscriptionGroupIdentifier: String? = nil,
        appAccountToken: String? = nil, promotionalOfferId: String? = nil, offerCodeRefName: String? = nil,
        environment: AppStoreEnvironment, renewal: ReceiptRenewalState? = nil
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
        self.promotionalOfferId = promotionalOfferId
        self.offerCodeRefName = offerCodeRefName
        self.environment = environment
        self.renewal = renewal
    }

    /// The canonical form of a legacy transaction; `nil` when it lacks a transaction ID, product ID or
    /// purchase date (nothing could be credited for it).
    package init?(_ legacy: LegacyTransaction, environment: AppStoreEnvironment) {
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
            promotionalOfferId: legacy.promotionalOfferId,
            offerCodeRefName: legacy.offerCodeRefName,
            environment: environment
        )
    }
}
