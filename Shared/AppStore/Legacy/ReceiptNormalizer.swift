import Foundation

/// Turns legacy receipt data — a `verifyReceipt` response of either shape, or a V1 notification's
/// `unified_receipt` — into one deduplicated list of canonical ``ReceiptTransaction``s, after checking
/// that it belongs to the configured app.
package enum ReceiptNormalizer {
    /// Normalizes a successful (`0` or `21006`) `verifyReceipt` response. A response without a `receipt`
    /// is Apple misbehaving: retryable `apple_bad_response`.
    ///
    /// - Parameters:
    ///   - answeredBy: the environment whose endpoint returned the response.
    ///   - expectedBundleId: the app's bundle ID; `receipt.bundle_id` (iOS 7) or `receipt.bid` (iOS 6) must
    ///     equal it, else the result is rejected with `wrong_bundle_id`.
    package static func normalize(
        response: VerifyReceiptResponse,
        answeredBy: AppStoreEnvironment,
        expectedBundleId: String,
        alsoAccepted: [String] = []
    ) -> VerificationResult<VerifiedReceipt> {
        guard let receipt = response.receipt else {
            return .retryable(
                VerificationFailure(
                    .appleBadResponse, "Apple answered status \(response.status) without a receipt"))
        }
        let bundleId = receipt.effectiveBundleId
        if let bundleId, alsoAccepted.contains(bundleId) {
            // One of the deployment's other apps (TOLLGATE_APPS).
        } else if let failure = bundleMismatch(bundleId, expected: expectedBundleId) {
            return .rejected(failure)
        }
        let environment = answeredBy
        var purchases = receipt.inApp
        if let top = receipt.transaction { purchases.insert(top, at: 0) }
        var latest = response.latestReceiptInfo
        if let expired = response.latestExpiredReceiptInfo { latest.append(expired) }
        let renewals = response.pendingRenewalInfo.compactMap(ReceiptRenewalState.init)
        return .verified(
            VerifiedReceipt(
                environment: environment,
                status: response.status,
                bundleId: bundleId ?? expectedBundleId,
                transactions: transactions(purchases: purchases, latest: latest, renewals: renewals, environment: environment),
                renewals: renewals,
                latestReceipt: response.latestReceipt
            ))
    }

    /// The canonical transactions in `purchases` (`in_app`, the iOS 6 top-level purchase) and `latest`
    /// (`latest_receipt_info`), one per transaction ID — the `latest_receipt_info` entry wins unless only
    /// the other one records a cancellation — with the renewal state attached to subscription periods,
    /// ordered by purchase date then transaction ID. Entries without an ID, product or purchase date are
    /// dropped.
    package static func transactions(
        purchases: [LegacyTransaction],
        latest: [LegacyTransaction],
        renewals: [ReceiptRenewalState],
        environment: AppStoreEnvironment
    ) -> [ReceiptTransaction] {
        var byId: [String: ReceiptTransaction] = [:]
        for legacy in purchases {
            guard let transaction = ReceiptTransaction(legacy, environment: environment) else { continue }
            if byId[transaction.transactionId] == nil { byId[transaction.transactionId] = transaction }
        }
        for legacy in latest {
            guard let transaction = ReceiptTransaction(legacy, environment: environment) else { continue }
            if let existing = byId[transaction.transactionId], existing.revocationDate != nil,
                transaction.revocationDate == nil
            {
                continue
            }
            byId[transaction.transactionId] = transaction
        }
        var renewalByOriginal: [String: ReceiptRenewalState] = [:]
        for renewal in renewals where renewalByOriginal[renewal.originalTransactionId] == nil {
            renewalByOriginal[renewal.originalTransactionId] = renewal
        }
        return byId.values
            .map { transaction in
                var transaction = transaction
                if transaction.isSubscription {
                    transaction.renewal = renewalByOriginal[transaction.originalTransactionId]
                }
                return transaction
            }
            .sorted { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
    }

    static func bundleMismatch(_ bundleId: String?, expected: String) -> VerificationFailure? {
        guard let bundleId, !bundleId.isEmpty else {
            return VerificationFailure(.wrongBundleID, "the receipt names no bundle ID")
        }
        guard bundleId == expected else {
            return VerificationFailure(.wrongBundleID, "the receipt is for bundle ID \(bundleId), not \(expected)")
        }
        return nil
    }
}
