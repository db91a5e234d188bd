import Core

/// Why an HTTP request got no response: a stable ``Code`` (timeouts and connection failures are told
/// apart) and a human message. HTTP error statuses are responses, not ``HTTPTransportError``s.
package struct HTTPTransportError: TollgateError, Sendable, Hashable {
    /// Stable machine codes.
    package enum Code: String, Sendable, Hashable, CustomStringConvertible {
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

        package var description: String { rawValue }
    }

    package var code: Code
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

}
