/// Which ``HTTPTransport`` a service calls Apple with: an operator's setting (`TOLLGATE_HTTP_TRANSPORT`).
package enum HTTPTransportKind: String, Sendable, CaseIterable {
    /// ``CurlTransport``, the default: libcurl's multi interface on one thread.
    case curl
    /// ``URLSessionTransport``: Foundation's `URLSession`, the fallback.
    case urlsession

    /// A new transport of this kind.
    package func make(maximumConnectionsPerHost: Int) -> any HTTPTransport {
        switch self {
        case .curl: CurlTransport(maximumConnectionsPerHost: maximumConnectionsPerHost)
        case .urlsession: URLSessionTransport(maximumConnectionsPerHost: maximumConnectionsPerHost)
        }
    }
}
