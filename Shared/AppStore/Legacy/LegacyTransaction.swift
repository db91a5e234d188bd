package import Foundation

/// One in-app purchase in a legacy receipt: Apple's `responseBody.Receipt.In_app` and
/// `responseBody.Latest_receipt_info` (also the transaction fields at the top of an iOS 6 receipt).
/// Every field is optional and read leniently; unknown fields are ignored.
package struct LegacyTransaction: Decodable, LegacyDecodable, Sendable, Hashable {
    package var transactionId: String?
    package var originalTransactionId: String?
    package var productId: String?
    package var quantity: Int?
    package var purchaseDate: Date?
    package var originalPurchaseDate: Date?
    package var expiresDate: Date?
    /// When Apple customer support refunded the purchase, or the customer upgraded away from it.
    package var cancellationDate: Date?
    /// `0` another reason, `1` an issue in the app.
    package var cancellationReason: Int?
    package var webOrderLineItemId: String?
    package var isTrialPeriod: Bool?
    package var isInIntroOfferPeriod: Bool?
    package var isUpgraded: Bool?
    /// `PURCHASED` or `FAMILY_SHARED`.
    package var inAppOwnershipType: String?
    package var subscriptionGroupIdentifier: String?
    package var promotionalOfferId: String?
    package var offerCodeRefName: String?
    package var appAccountToken: String?

    package init() {}

    enum CodingKeys: String, CodingKey {
        case transactionId = "transaction_id"
        case originalTransactionId = "original_transaction_id"
        case productId = "product_id"
        case quantity
        case purchaseDate = "purchase_date"
        case purchaseDateMs = "purchase_date_ms"
        case originalPurchaseDate = "original_purchase_date"
        case originalPurchaseDateMs = "original_purchase_date_ms"
        case expiresDate = "expires_date"
        case expiresDateMs = "expires_date_ms"
        case expiresDateFormatted = "expires_date_formatted"
        case cancellationDate = "cancellation_date"
        case cancellationDateMs = "cancellation_date_ms"
        case cancellationReason = "cancellation_reason"
        case webOrderLineItemId = "web_order_line_item_id"
        case isTrialPeriod = "is_trial_period"
        case isInIntroOfferPeriod = "is_in_intro_offer_period"
        case isUpgraded = "is_upgraded"
        case inAppOwnershipType = "in_app_ownership_type"
        case subscriptionGroupIdentifier = "subscription_group_identifier"
        case promotionalOfferId = "promotional_offer_id"
        case offerCodeRefName = "offer_code_ref_name"
        case appAccountToken = "app_account_token"
    }

    package init(from decoder: any Decoder) throws { try self.init(legacy: LegacyFields(decoder)) }

    init(legacy container: LegacyFields<CodingKeys>) throws {
        transactionId = container.legacyString(.transactionId)
        originalTransactionId = container.legacyString(.originalTransactionId)
        productId = container.legacyString(.productId)
        quantity = container.legacyInt(.quantity)
        purchaseDate = container.legacyDate(millis: .purchaseDateMs, text: .purchaseDate)
        originalPurchaseDate = container.legacyDate(millis: .originalPurchaseDateMs, text: .originalPurchaseDate)
        expiresDate =
            container.legacyDate(millis: .expiresDateMs, text: .expiresDate)
            ?? container.legacyDate(millis: .expiresDateMs, text: .expiresDateFormatted)
        cancellationDate = container.legacyDate(millis: .cancellationDateMs, text: .cancellationDate)
        cancellationReason = container.legacyInt(.cancellationReason)
        webOrderLineItemId = container.legacyString(.webOrderLineItemId)
        isTrialPeriod = container.legacyBool(.isTrialPeriod)
        isInIntroOfferPeriod = container.legacyBool(.isInIntroOfferPeriod)
        isUpgraded = container.legacyBool(.isUpgraded)
        inAppOwnershipType = container.legacyString(.inAppOwnershipType)
        subscriptionGroupIdentifier = container.legacyString(.subscriptionGroupIdentifier)
        promotionalOfferId = container.legacyString(.promotionalOfferId)
        offerCodeRefName = container.legacyString(.offerCodeRefName)
        appAccountToken = container.legacyString(.appAccountToken)
    }
}
