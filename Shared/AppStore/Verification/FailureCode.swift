/// A stable, machine-readable reason code. Codes are part of Tollgate's public interface (job results,
/// `tollctl verify`, HTTP errors): add new ones, never rename existing ones.
package struct FailureCode: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    package var rawValue: String
    package var description: String { rawValue }

    package init(rawValue: String) { self.rawValue = rawValue }
    package init(stringLiteral value: String) { self.rawValue = value }
}

extension FailureCode {
    // JWS and certificate chain
    package static let invalidFormat: FailureCode = "invalid_format"
    package static let unsupportedAlgorithm: FailureCode = "unsupported_algorithm"
    package static let invalidChain: FailureCode = "invalid_chain"
    package static let invalidSignature: FailureCode = "invalid_signature"
    package static let certificateExpired: FailureCode = "certificate_expired"
    package static let retryableOCSP: FailureCode = "retryable_ocsp"
    /// A chain never seen before was not checked because the caller's budget for such checks is spent (retryable).
    package static let chainCheckDeferred: FailureCode = "chain_check_deferred"

    // Whose data it is
    package static let wrongBundleID: FailureCode = "wrong_bundle_id"
    /// A user of one project submitted a purchase of another project's app (docs/PROJECTS.md).
    package static let wrongProject: FailureCode = "wrong_project"
    package static let wrongEnvironment: FailureCode = "wrong_environment"
    package static let wrongAppAppleID: FailureCode = "wrong_app_apple_id"

    // The shape of a V2 notification: exactly one of `data`, `summary`, `externalPurchaseToken`, `appData`
    package static let missingNotificationData: FailureCode = "missing_notification_data"
    package static let ambiguousNotificationData: FailureCode = "ambiguous_notification_data"
}

extension FailureCode {
    // verifyReceipt: the receipt itself (permanent)
    package static let invalidReceipt: FailureCode = "invalid_receipt"
    package static let receiptRequestInvalid: FailureCode = "receipt_request_invalid"
    package static let receiptMalformed: FailureCode = "receipt_malformed"
    package static let receiptNotAuthentic: FailureCode = "receipt_not_authentic"
    /// A receipt carrying more certificates than Apple's ever do: refused before any is read.
    package static let receiptTooManyCertificates: FailureCode = "receipt_too_many_certificates"
    /// The customer's transaction history is longer than a receipt may read (`TOLLGATE_RECEIPT_MAX_HISTORY_PAGES`).
    package static let receiptHistoryTooLong: FailureCode = "receipt_history_too_long"
    /// A receipt kind only `verifyReceipt` can check (an iOS 6 transaction receipt) on a deployment without it.
    package static let receiptUnsupported: FailureCode = "receipt_unsupported"
    package static let sharedSecretMismatch: FailureCode = "shared_secret_mismatch"
    package static let receiptUnauthorized: FailureCode = "receipt_unauthorized"
    package static let receiptRejected: FailureCode = "receipt_rejected"
    package static let sandboxNotAllowed: FailureCode = "sandbox_not_allowed"

    // Apple's services could not answer now (retryable)
    package static let appleUnavailable: FailureCode = "apple_unavailable"
    /// An operator's call over HTTP (``OperatorCall``) failed for a reason of Tollgate's own (Redis): retried.
    package static let operatorCallFailed: FailureCode = "operator_call_failed"
    package static let appleRateLimited: FailureCode = "apple_rate_limited"
    package static let appleTimeout: FailureCode = "apple_timeout"
    package static let appleUnreachable: FailureCode = "apple_unreachable"
    package static let appleBadResponse: FailureCode = "apple_bad_response"
    /// The user's budget of calls to Apple is spent for now (`TOLLGATE_USER_APPLE_CALLS`; retryable).
    package static let userAppleBudgetSpent: FailureCode = "user_apple_budget_spent"
}

extension FailureCode {
    // Online revocation (OCSP): a verified OCSP response says the certificate is revoked.
    package static let certificateRevoked: FailureCode = "certificate_revoked"
}
