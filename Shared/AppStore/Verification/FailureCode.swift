/// A stable, machine-readable reason code. Codes are part of Tollgate's public interface (job results,
/// `tollctl verify`, HTTP errors): add new ones, never rename existing ones.
public struct FailureCode: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral, CustomStringConvertible {
    public var rawValue: String
    public var description: String { rawValue }

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }
}

extension FailureCode {
    // JWS and certificate chain
    public static let invalidFormat: FailureCode = "invalid_format"
    public static let unsupportedAlgorithm: FailureCode = "unsupported_algorithm"
    public static let invalidChain: FailureCode = "invalid_chain"
    public static let invalidSignature: FailureCode = "invalid_signature"
    public static let certificateExpired: FailureCode = "certificate_expired"
    public static let retryableOCSP: FailureCode = "retryable_ocsp"

    // Whose data it is
    public static let wrongBundleID: FailureCode = "wrong_bundle_id"
    public static let wrongEnvironment: FailureCode = "wrong_environment"
    public static let wrongAppAppleID: FailureCode = "wrong_app_apple_id"
}

extension FailureCode {
    // verifyReceipt: the receipt itself (permanent)
    public static let invalidReceipt: FailureCode = "invalid_receipt"
    public static let receiptRequestInvalid: FailureCode = "receipt_request_invalid"
    public static let receiptMalformed: FailureCode = "receipt_malformed"
    public static let receiptNotAuthentic: FailureCode = "receipt_not_authentic"
    public static let sharedSecretMismatch: FailureCode = "shared_secret_mismatch"
    public static let receiptUnauthorized: FailureCode = "receipt_unauthorized"
    public static let receiptRejected: FailureCode = "receipt_rejected"
    public static let sandboxNotAllowed: FailureCode = "sandbox_not_allowed"

    // Apple's services could not answer now (retryable)
    public static let appleUnavailable: FailureCode = "apple_unavailable"
    public static let appleRateLimited: FailureCode = "apple_rate_limited"
    public static let appleTimeout: FailureCode = "apple_timeout"
    public static let appleUnreachable: FailureCode = "apple_unreachable"
    public static let appleBadResponse: FailureCode = "apple_bad_response"
}

extension FailureCode {
    // Online revocation (OCSP): a verified OCSP response says the certificate is revoked.
    public static let certificateRevoked: FailureCode = "certificate_revoked"
}
