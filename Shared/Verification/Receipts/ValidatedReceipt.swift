import AppStore
import Pipeline

/// A receipt Apple vouched for, by either route, in the events' canonical form.
struct ValidatedReceipt: Sendable {
    /// The environment whose answer this is.
    var environment: AppStoreEnvironment
    var transactions: [PurchaseEventTransaction]
    /// The renewal state of each subscription on the receipt.
    var renewals: [PurchaseEventRenewal]
    /// Apple's latest base64 receipt, when `verifyReceipt` sent one.
    var latestReceipt: String?
    /// Which route validated it.
    var route: ReceiptValidationMode
    /// The app Apple says the receipt is of (one of the deployment's: both routes refuse others).
    var bundleId: String? = nil
}

/// The outcome of validating one receipt.
struct ReceiptValidation: Sendable {
    var result: VerificationResult<ValidatedReceipt>
    /// Apple's `Retry-After`, when it sent one.
    var retryAfter: Duration?

    init(_ result: VerificationResult<ValidatedReceipt>, retryAfter: Duration? = nil) {
        self.result = result
        self.retryAfter = retryAfter
    }

    static func rejected(_ code: FailureCode, _ message: String) -> ReceiptValidation {
        ReceiptValidation(.rejected(VerificationFailure(code, message)))
    }
}
