import Foundation

/// One HTTP response: status, headers (names lowercased) and the whole body.
public struct HTTPTransportResponse: Sendable {
    public var status: Int
    /// Header values by lowercased name.
    public var headers: [String: String]
    public var body: Data

    public init(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
    }

    /// The value of a header, looked up case-insensitively.
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }

    /// The delay asked for by a `Retry-After` header (delta-seconds or an HTTP date), if any.
    public func retryAfter(now: Date = Date()) -> Duration? {
        header("Retry-After").flatMap { RetryAfter.parse($0, now: now) }
    }
}
