import Core

/// No token of a fleet-wide bucket came within the limiter's maximum wait.
public struct RateLimitError: TollgateError, Sendable {
    public var bucket: String
    /// When a token is expected.
    public var retryAfter: Duration
    public var code: String { "rate_limited" }
    public var message: String { "bucket \(bucket) is empty; retry after \(retryAfter)" }
}
