import Core

/// No token of a fleet-wide bucket came within the limiter's maximum wait.
package struct RateLimitError: TollgateError, Sendable {
    package var bucket: String
    /// When a token is expected.
    package var retryAfter: Duration
    package var code: String { "rate_limited" }
    package var message: String { "bucket \(bucket) is empty; retry after \(retryAfter)" }
}
