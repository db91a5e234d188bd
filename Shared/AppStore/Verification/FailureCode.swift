/// A stable, machine-readable reason code. Codes are part of Tollgate's public interface (job results,
/// `tollctl verify`, HTTP errors): add new ones, never rename existing ones.
public struct FailureCode: RawRepresentable, Sendable, Hashable, Codable, ExpressibleByStringLiteral {
    public var rawValue: String

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
