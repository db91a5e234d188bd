package import Foundation

/// One outgoing HTTP request: method, absolute URL, headers, optional body and a timeout for the whole
/// exchange.
package struct HTTPTransportRequest: Sendable {
    /// The HTTP methods Apple's endpoints use.
    package enum Method: String, Sendable {
        case get = "GET"
        case post = "POST"
        case put = "PUT"
    }

    package var method: Method
    package var url: URL
    /// Header names and values, sent as given (names are case-insensitive on the wire).
    package var headers: [String: String]
    package var body: Data?
    /// How long the whole request may take before it fails with ``HTTPTransportError/Code/timeout``.
    package var timeout: Duration

    package init(
        method: Method,
        url: URL,
        headers: [String: String] = [:],
        body: Data? = nil,
        timeout: Duration = .seconds(30)
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
    }
}
