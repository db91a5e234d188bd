/// The renewal state of one auto-renewable subscription in a ``PurchaseEvent``, from a receipt's
/// `pending_renewal_info` or a notification's `signedRenewalInfo`.
///
/// JSON fields (dates in milliseconds since 1970; absent optionals omitted):
/// - `originalTransactionId` — the subscription it describes.
/// - `productId` — the product currently subscribed to.
/// - `autoRenewStatus` — `1` renews, `0` turned off.
/// - `autoRenewProductId` — the product of the next renewal (differs after an up- or downgrade).
/// - `expirationIntent` — why it expired (`1` cancelled, `2` billing error, `3` price increase declined,
///   `4` product unavailable, `5` other).
/// - `isInBillingRetryPeriod` — Apple is still trying to bill.
/// - `gracePeriodExpiresDate` — end of the billing grace period, while in one (entitlement continues).
/// - `signedDate` — when Apple signed it (JWS sources only).
/// - `eligibleWinBackOfferIds` — the win-back offers Apple says the customer may redeem (JWS sources only).
package struct PurchaseEventRenewal: Codable, Sendable, Hashable {
    package var originalTransactionId: String
    package var productId: String?
    package var autoRenewStatus: Int?
    package var autoRenewProductId: String?
    package var expirationIntent: Int?
    package var isInBillingRetryPeriod: Bool?
    package var gracePeriodExpiresDate: Int64?
    package var signedDate: Int64?
    package var eligibleWinBackOfferIds: [String]?

    package init(
        originalTransactionId: String, productId: String? = nil, autoRenewStatus: Int? = nil,
        autoRenewProductId: String? = nil, expirationIntent: Int? = nil, isInBillingRetryPeriod: Bool? = nil,
        gracePeriodExpiresDate: Int64? = nil, signedDate: Int64? = nil, eligibleWinBackOfferIds: [String]? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.autoRenewStatus = autoRenewStatus
        self.autoRenewProductId = autoRenewProductId
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.signedDate = signedDate
        self.eligibleWinBackOfferIds = eligibleWinBackOfferIds
    }
}
