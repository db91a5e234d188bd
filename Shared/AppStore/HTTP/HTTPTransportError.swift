import Core

/// Why an HTTP request got no response: a stable ``Code`` (timeouts and connection failures are told
/// apart) and a human message. HTTP error statuses are responses, not ``HTTPTransportError``s.
public struct HTTPTransportError: TollgateError, Sendable, Hashable {
    /// Stable machine codes.
    public enum Code: String, Sendable, Hashable, CustomStringConvertible {
        /// The request did not complete within its timeout.
        case timeout = "timeout"
        /// No connection could be made or it broke (refused, DNS failure, reset, lost).
        case connectionFailed = "connection_failed"
        /// The TLS handshake failed (untrusted certificate, protocol error).
        case tlsFailed = "tls_failed"
        /// Something answered, but not with a usable HTTP response.
        case invalidResponse = "invalid_response"
        /// Any other transport failure.
        case failed = "transport_failed"

        public var description: String { rawValue }
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

}
