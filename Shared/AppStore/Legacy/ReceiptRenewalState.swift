package import Foundation

/// The renewal state of one auto-renewable subscription, taken from a legacy response's
/// `pending_renewal_info` and keyed by the subscription's original transaction ID.
package struct ReceiptRenewalState: Codable, Sendable, Hashable {
    package var originalTransactionId: String
    /// The product currently subscribed to.
    package var productId: String?
    package var autoRenewStatus: AutoRenewStatus?
    /// The product that renews next (differs from ``productId`` after an up- or downgrade).
    package var autoRenewProductId: String?
    package var expirationIntent: ExpirationIntent?
    package var isInBillingRetryPeriod: Bool
    /// The end of the billing grace period, when the subscription is in one.
    package var gracePeriodExpiresDate: Date?

    package init(
        originalTransactionId: String,
        productId: String? = nil,
        autoRenewStatus: AutoRenewStatus? = nil,
        autoRenewProductId: String? = nil,
        expirationIntent: ExpirationIntent? = nil,
        isInBillingRetryPeriod: Bool = false,
        gracePeriodExpiresDate: Date? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.autoRenewStatus = autoRenewStatus
        self.autoRenewProductId = autoRenewProductId
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
    }

    /// The canonical state of one `pending_renewal_info` entry; `nil` without an original transaction ID.
    package init?(_ info: LegacyPendingRenewalInfo) {
        guard let originalTransactionId = info.originalTransactionId, !originalTransactionId.isEmpty else { return nil }
        self.init(
            originalTransactionId: originalTransactionId,
            productId: info.productId,
            autoRenewStatus: info.autoRenewStatus.map(AutoRenewStatus.init(rawValue:)),
            autoRenewProductId: info.autoRenewProductId,
            expirationIntent: info.expirationIntent.map(ExpirationIntent.init(rawValue:)),
            isInBillingRetryPeriod: info.isInBillingRetryPeriod ?? false,
            gracePeriodExpiresDate: info.gracePeriodExpiresDate
        )
    }
}
