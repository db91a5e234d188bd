package import Foundation

/// One HTTP response: status, headers (names lowercased) and the whole body.
package struct HTTPTransportResponse: Sendable {
    package var status: Int
    /// Header values by lowercased name.
    package var headers: [String: String]
    package var body: Data

    package init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }

    /// The value of a header, looked up case-insensitively.
    package func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }

    /// The delay asked for by a `Retry-After` header (delta-seconds or an HTTP date), if any.
    package func retryAfter(now: Date = Date()) -> Duration? {
        header("Retry-After").flatMap { RetryAfter.parse($0, now: now) }
    }
}
