import AppStore
import Foundation

/// One App Store transaction as the simulator holds it; dates in milliseconds since 1970.
struct SimTransaction: Sendable, Hashable {
    var transactionId: String
    var originalTransactionId: String
    var webOrderLineItemId: String?
    var bundleId: String
    var productId: String
    var type: ProductType
    var quantity: Int
    var purchaseDate: Int64
    var originalPurchaseDate: Int64
    var expiresDate: Int64?
    var appAccountToken: String?
    var inAppOwnershipType: InAppOwnershipType
    var revocationDate: Int64?
    var revocationReason: RevocationReason?
    var revocationType: RevocationType?
    /// Apple's `revocationPercentage` (milli-percent), with ``revocationType``.
    var revocationPercentage: Int? = nil
    var environment: AppStoreEnvironment
    var subscriptionGroupIdentifier: String?
    var transactionReason: TransactionReason
    var currency: String
    var price: Int64

    var isAutoRenewable: Bool { type == .autoRenewableSubscription }

    /// Apple's `JWSTransactionDecodedPayload` for this transaction, signed at `signedDate`.
    func payload(signedDate: Int64) -> JWSTransactionDecodedPayload {
        var payload = JWSTransactionDecodedPayload(
            originalTransactionId: originalTransactionId, transactionId: transactionId,
            webOrderLineItemId: webOrderLineItemId, bundleId: bundleId, productId: productId,
            subscriptionGroupIdentifier: subscriptionGroupIdentifier, purchaseDate: purchaseDate,
            originalPurchaseDate: originalPurchaseDate, expiresDate: expiresDate, quantity: quantity, type: type,
            appAccountToken: appAccountToken, inAppOwnershipType: inAppOwnershipType, signedDate: signedDate,
            revocationReason: revocationReason, revocationDate: revocationDate,
            environment: environment, storefront: "USA", storefrontId: "143441",
            transactionReason: transactionReason, currency: currency, price: price
        )
        payload.revocationType = revocationType
        payload.revocationPercentage = revocationPercentage
        return payload
    }
}
