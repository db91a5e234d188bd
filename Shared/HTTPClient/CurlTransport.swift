import CCurl
import Foundation

/// The default ``HTTPTransport``: libcurl's multi interface, driven by one dedicated thread per transport.
///
/// - Connections are kept in the multi handle's connection cache and reused by later requests (at most
///   `maximumConnectionsPerHost` to one host); HTTP/2 is used where the server offers it over TLS, and requests
///   wait to multiplex on an HTTP/2 connection rather than open another (`CURLOPT_PIPEWAIT`).
/// - Each request has an exact deadline: libcurl's own timer (`CURLOPT_TIMEOUT_MS`) and the loop's, whichever
///   fires first; either way the call throws ``HTTPTransportError`` with code `.timeout` at its timeout.
/// - Cancelling the calling task ends the call at once with `CancellationError`; the transfer is dropped.
/// - TLS peers and host names are always verified; the standard proxy variables (`https_proxy`, `no_proxy`, …)
///   are honoured by libcurl; no redirects are followed, no cookies kept.
/// - A response body (with its headers) larger than `maximumBodySize` is refused as `.invalidResponse`.
///
/// Nothing here logs; bodies and headers (`Authorization`) never leave the exchange.
package final class CurlTransport: HTTPTransport {
    /// The largest response accepted by default: 16 MiB.
    package static let defaultMaximumBodySize = 16 << 20

    private let loop: CurlLoop?
    private let maximumBodySize: Int

    /// - Parameters:
    ///   - maximumConnectionsPerHost: how many parallel connections to one host are opened; more requests wait.
    ///   - maximumBodySize: the largest response (headers and body) accepted, in bytes.
    package init(maximumConnectionsPerHost: Int = 16, maximumBodySize: Int = CurlTransport.defaultMaximumBodySize) {
        self.maximumBodySize = max(1, maximumBodySize)
        self.loop = CurlGlobal.isReady ? CurlLoop(maximumConnectionsPerHost: max(1, maximumConnectionsPerHost)) : nil
    }

    deinit {
        loop?.shutDown()
    }

    package func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        guard let loop else {
            throw HTTPTransportError(.failed, "libcurl could not be initialised")
        }
        try Task.checkCancellation()
        let exchange = try CurlExchange(request: request, maximumResponseSize: maximumBodySize)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if exchange.start(continuation) {
                    loop.add(exchange)
                }
            }
        } onCancel: {
            if exchange.cancel() {
                loop.remove(exchange)
            }
        }
    }
}

/// `curl_global_init`, once per process, before the first handle.
enum CurlGlobal {
    static let isReady: Bool = tg_curl_global_init() == CURLE_OK
}
