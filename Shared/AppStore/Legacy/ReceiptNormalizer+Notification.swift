import Foundation

extension ReceiptNormalizer {
    /// Checks a V1 notification and normalizes its `unified_receipt`.
    ///
    /// The notification's `password` must equal `sharedSecret` (compared in constant time) — it is the only
    /// proof that Apple sent it — else `shared_secret_mismatch`; `bid` must equal `expectedBundleId`, else
    /// `wrong_bundle_id`. A notification without a `unified_receipt` is rejected with `invalid_format`.
    /// Pass `sharedSecret: nil` only where the password was checked already.
    public static func normalize(
        notification: ServerNotificationV1,
        expectedBundleId: String,
        sharedSecret: String?
    ) -> VerificationResult<VerifiedReceipt> {
        if let sharedSecret {
            guard let password = notification.password, constantTimeEqual(password, sharedSecret) else {
                return .rejected(VerificationFailure(
                    .sharedSecretMismatch, "the notification's password does not match the shared secret"))
            }
        }
        if let failure = bundleMismatch(notification.bid, expected: expectedBundleId) {
            return .rejected(failure)
        }
        guard let unified = notification.unifiedReceipt else {
            return .rejected(VerificationFailure(.invalidFormat, "the V1 notification has no unified_receipt"))
        }
        let environment = unified.environment ?? notification.environment ?? .production
        let renewals = unified.pendingRenewalInfo.compactMap(ReceiptRenewalState.init)
        return .verified(VerifiedReceipt(
            environment: environment,
            status: unified.status ?? ReceiptStatus.valid,
            bundleId: expectedBundleId,
            transactions: transactions(
                purchases: [], latest: unified.latestReceiptInfo, renewals: renewals, environment: environment),
            renewals: renewals,
            latestReceipt: unified.latestReceipt
        ))
    }

    static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        var difference = UInt8(left.count == right.count ? 0 : 1)
        for index in 0..<max(left.count, right.count) {
            let a = index < left.count ? left[index] : 0
            let b = index < right.count ? right[index] : 0
            difference |= a ^ b
        }
        return difference == 0
    }
}
