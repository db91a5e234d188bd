import AppStore
import Foundation

/// The renewal state of one auto-renewable subscription (all transactions sharing an
/// `originalTransactionId`), from which renewal info and subscription statuses are made.
struct SimSubscription: Sendable, Hashable {
    var originalTransactionId: String
    var productId: String
    var autoRenewProductId: String
    var autoRenewStatus: AutoRenewStatus = .on
    var expirationIntent: ExpirationIntent?
    var isInBillingRetryPeriod = false
    var gracePeriodExpiresDate: Int64?
    var status: SubscriptionStatus = .active
    /// Length of one period, used by renewals.
    var periodMillis: Int64
    var subscriptionGroupIdentifier: String

    /// Apple's `JWSRenewalInfoDecodedPayload`.
    func renewalInfo(latest: SimTransaction, signedDate: Int64) -> JWSRenewalInfoDecodedPayload {
        var info = JWSRenewalInfoDecodedPayload(
            originalTransactionId: originalTransactionId, autoRenewProductId: autoRenewProductId,
            productId: productId, autoRenewStatus: autoRenewStatus, expirationIntent: expirationIntent,
            isInBillingRetryPeriod: isInBillingRetryPeriod, gracePeriodExpiresDate: gracePeriodExpiresDate,
            signedDate: signedDate, environment: latest.environment,
            renewalDate: autoRenewStatus == .on ? latest.expiresDate : nil
        )
        info.recentSubscriptionStartDate = latest.originalPurchaseDate
        info.appAccountToken = latest.appAccountToken
        if autoRenewStatus == .on {
            info.currency = latest.currency
            info.renewalPrice = latest.price
        }
        return info
    }
}
