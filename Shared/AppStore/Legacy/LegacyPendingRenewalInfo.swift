package import Foundation

/// The renewal state of one auto-renewable subscription in a legacy receipt response: Apple's
/// `responseBody.Pending_renewal_info`. Read leniently; unknown fields are ignored.
package struct LegacyPendingRenewalInfo: Decodable, LegacyDecodable, Sendable, Hashable {
    package var originalTransactionId: String?
    package var productId: String?
    package var autoRenewProductId: String?
    /// `1` renews at the end of the period, `0` the customer turned renewal off.
    package var autoRenewStatus: Int?
    /// Why the subscription expired (`1` cancelled … `5` other).
    package var expirationIntent: Int?
    package var isInBillingRetryPeriod: Bool?
    package var gracePeriodExpiresDate: Date?
    package var priceConsentStatus: Int?
    package var offerCodeRefName: String?
    package var promotionalOfferId: String?

    package init() {}

    enum CodingKeys: String, CodingKey {
        case originalTransactionId = "original_transaction_id"
        case productId = "product_id"
        case autoRenewProductId = "auto_renew_product_id"
        case autoRenewStatus = "auto_renew_status"
        case expirationIntent = "expiration_intent"
        case isInBillingRetryPeriod = "is_in_billing_retry_period"
        case gracePeriodExpiresDate = "grace_period_expires_date"
        case gracePeriodExpiresDateMs = "grace_period_expires_date_ms"
        case priceConsentStatus = "price_consent_status"
        case offerCodeRefName = "offer_code_ref_name"
        case promotionalOfferId = "promotional_offer_id"
    }

    package init(from decoder: any Decoder) throws { try self.init(legacy: LegacyFields(decoder)) }

    init(legacy container: LegacyFields<CodingKeys>) throws {
        originalTransactionId = container.legacyString(.originalTransactionId)
        productId = container.legacyString(.productId)
        autoRenewProductId = container.legacyString(.autoRenewProductId)
        autoRenewStatus =
            container.legacyInt(.autoRenewStatus)
            ?? container.legacyBool(.autoRenewStatus).map { $0 ? 1 : 0 }
        expirationIntent = container.legacyInt(.expirationIntent)
        isInBillingRetryPeriod = container.legacyBool(.isInBillingRetryPeriod)
        gracePeriodExpiresDate = container.legacyDate(millis: .gracePeriodExpiresDateMs, text: .gracePeriodExpiresDate)
        priceConsentStatus = container.legacyInt(.priceConsentStatus)
        offerCodeRefName = container.legacyString(.offerCodeRefName)
        promotionalOfferId = container.legacyString(.promotionalOfferId)
    }
}
