import AppStore
import Core
@preconcurrency import Crypto
import Foundation

/// Renders a simulator receipt as Apple's `verifyReceipt` answer, in the iOS 7 shape (`receipt.in_app`,
/// `latest_receipt_info`, `pending_renewal_info`, `latest_receipt`) or the iOS 6 shape (the first
/// purchase's fields at the top of `receipt`, with `bid` and `bvrs`).
struct LegacyReceiptRenderer {
    var ledger: SimLedger
    var appAppleId: Int64
    var now: Int64

    /// The whole JSON answer (status 0, or 21006 for an expired iOS 6 subscription).
    func render(_ receipt: SimReceipt, excludeOldTransactions: Bool, iOS6: Bool) -> Data {
        let object = iOS6 ? renderIOS6(receipt) : renderIOS7(receipt, excludeOld: excludeOldTransactions)
        var writer = JSONWriter(capacity: 4096)
        writer.any(object)
        return Data(writer.bytes)
    }

    private func chain(_ originalTransactionId: String) -> [SimTransaction] {
        (ledger.chains[originalTransactionId] ?? []).compactMap { ledger.transactions[$0] }
    }

    private func renderIOS7(_ receipt: SimReceipt, excludeOld: Bool) -> [String: Any] {
        let all = receipt.originalTransactionIds.flatMap(chain)
        let sandbox = receipt.environment == .sandbox
        var body: [String: Any] = LegacyDate.fields("receipt_creation_date", receipt.creationDate)
            .merging(LegacyDate.fields("request_date", now)) { first, _ in first }
            .merging(LegacyDate.fields("original_purchase_date", receipt.creationDate)) { first, _ in first }
        body["receipt_type"] = sandbox ? "ProductionSandbox" : "Production"
        body["adam_id"] = sandbox ? 0 : appAppleId
        body["app_item_id"] = sandbox ? 0 : appAppleId
        body["bundle_id"] = receipt.bundleId
        body["application_version"] = "1"
        body["download_id"] = 0
        body["version_external_identifier"] = 0
        body["original_application_version"] = "1.0"
        body["in_app"] = all.map { fields($0, latestInfo: false) }
        var response: [String: Any] = [
            "status": 0,
            "environment": sandbox ? "Sandbox" : "Production",
            "receipt": body,
        ]
        let subscriptionIds = receipt.originalTransactionIds.filter { ledger.subscriptions[$0] != nil }
        if !subscriptionIds.isEmpty {
            var latest = excludeOld ? subscriptionIds.compactMap { chain($0).last } : all
            latest.sort { ($0.purchaseDate, $0.transactionId) > ($1.purchaseDate, $1.transactionId) }
            response["latest_receipt_info"] = latest.map { fields($0, latestInfo: true) }
            response["pending_renewal_info"] = subscriptionIds.compactMap(pendingRenewal)
            response["latest_receipt"] = receipt.token
        }
        return response
    }

    private func renderIOS6(_ receipt: SimReceipt) -> [String: Any] {
        let sandbox = receipt.environment == .sandbox
        guard let original = receipt.originalTransactionIds.first, let first = chain(original).first else {
            return ["status": 21003]
        }
        let transactions = chain(original)
        var top = fields(first, latestInfo: false, iOS6: true)
        top["bid"] = receipt.bundleId
        top["bvrs"] = "1"
        top["item_id"] = String(appAppleId)
        top["unique_identifier"] = SHA256.hash(data: Data(receipt.token.utf8)).prefix(20).map { String(format: "%02x", $0) }.joined()
        top["version_external_identifier"] = "0"
        var response: [String: Any] = ["status": 0, "receipt": top]
        if !sandbox { response["environment"] = "Production" } else { response["environment"] = "Sandbox" }
        if first.isAutoRenewable, let last = transactions.last {
            var info = fields(last, latestInfo: true, iOS6: true)
            info["bid"] = receipt.bundleId
            info["bvrs"] = "1"
            if let expires = last.expiresDate, expires <= now {
                response["status"] = ReceiptStatus.subscriptionExpired
                response["latest_expired_receipt_info"] = info
            } else {
                response["latest_receipt_info"] = info
                response["latest_receipt"] = receipt.token
            }
        }
        return response
    }

    /// One purchase's fields, strings as Apple sends them.
    private func fields(_ transaction: SimTransaction, latestInfo: Bool, iOS6: Bool = false) -> [String: Any] {
        var fields: [String: Any] = LegacyDate.fields("purchase_date", transaction.purchaseDate)
            .merging(LegacyDate.fields("original_purchase_date", transaction.originalPurchaseDate)) { first, _ in first }
        fields["quantity"] = String(transaction.quantity)
        fields["product_id"] = transaction.productId
        fields["transaction_id"] = transaction.transactionId
        fields["original_transaction_id"] = transaction.originalTransactionId
        fields["is_trial_period"] = "false"
        fields["in_app_ownership_type"] = transaction.inAppOwnershipType.rawValue
        if let token = transaction.appAccountToken { fields["app_account_token"] = token }
        if let expires = transaction.expiresDate {
            if iOS6 {
                fields["expires_date"] = String(expires)
                fields["expires_date_formatted"] = LegacyDate.gmt(expires)
                fields["expires_date_formatted_pst"] = LegacyDate.pst(expires)
            } else {
                fields.merge(LegacyDate.fields("expires_date", expires)) { first, _ in first }
            }
            fields["is_in_intro_offer_period"] = "false"
        }
        if let line = transaction.webOrderLineItemId { fields["web_order_line_item_id"] = line }
        if latestInfo, let group = transaction.subscriptionGroupIdentifier { fields["subscription_group_identifier"] = group }
        if let revoked = transaction.revocationDate {
            fields.merge(LegacyDate.fields("cancellation_date", revoked)) { first, _ in first }
            fields["cancellation_reason"] = String(transaction.revocationReason?.rawValue ?? 0)
        }
        return fields
    }

    private func pendingRenewal(_ originalTransactionId: String) -> [String: Any]? {
        guard let subscription = ledger.subscriptions[originalTransactionId] else { return nil }
        var info: [String: Any] = [
            "original_transaction_id": originalTransactionId,
            "product_id": subscription.productId,
            "auto_renew_product_id": subscription.autoRenewProductId,
            "auto_renew_status": String(subscription.autoRenewStatus.rawValue),
        ]
        if let intent = subscription.expirationIntent { info["expiration_intent"] = String(intent.rawValue) }
        if subscription.isInBillingRetryPeriod || subscription.expirationIntent != nil {
            info["is_in_billing_retry_period"] = subscription.isInBillingRetryPeriod ? "1" : "0"
        }
        if let grace = subscription.gracePeriodExpiresDate {
            info.merge(LegacyDate.fields("grace_period_expires_date", grace)) { first, _ in first }
        }
        return info
    }
}
