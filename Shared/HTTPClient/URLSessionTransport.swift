import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The fallback ``HTTPTransport`` (``CurlTransport`` is the default): one `URLSession` for the life of the transport (on Linux built on the
/// system libcurl), so connections to Apple are kept alive and reused; the standard proxy variables
/// (`https_proxy`, `no_proxy`, …) are honoured by libcurl. No cookies, no cache.
///
/// Each request has a hard deadline: when it passes, the request is cancelled and the call throws
/// ``HTTPTransportError`` with code `.timeout`, whatever libcurl's own timers do.
package final class URLSessionTransport: HTTPTransport {
    private let session: URLSession

    /// - Parameter maximumConnectionsPerHost: how many parallel connections to one host the session keeps.
    package init(maximumConnectionsPerHost: Int = 16) {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpMaximumConnectionsPerHost = maximumConnectionsPerHost
        self.session = URLSession(configuration: configuration)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    package func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        // Our own deadline (PendingExchange) is exact; libcurl's timer rounds to whole seconds and fires at
        // once for values below one, so it only backs ours up.
        urlRequest.timeoutInterval = request.timeout.timeInterval.rounded(.up) + 1
        for (name, value) in request.headers {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        urlRequest.httpBody = request.body

        let exchange = PendingExchange()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let task = session.dataTask(with: urlRequest) { data, response, error in
                    exchange.finish(Self.outcome(data: data, response: response, error: error))
                }
                exchange.start(task, timeout: request.timeout, continuation: continuation)
            }
        } onCancel: {
            exchange.cancel()
        }
    }

    private static func outcome(data: Data?, response: URLResponse?, error: (any Error)?) -> Result<HTTPTransportResponse, any Error> {
        if let error {
            return .failure(Self.transportError(error))
        }
        guard let http = response as? HTTPURLResponse else {
            return .failure(HTTPTransportError(.invalidResponse, "the response is not an HTTP response"))
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String {
                headers[name.lowercased()] = value
            }
        }
        return .success(HTTPTransportResponse(status: http.statusCode, headers: headers, body: data ?? Data()))
    }

    private static func transportError(_ error: any Error) -> HTTPTransportError {
        guard let urlError = error as? URLError else {
            return HTTPTransportError(.failed, String(describing: error))
        }
        switch urlError.code {
        case .timedOut:
            return HTTPTransportError(.timeout, "the request timed out (URLError)")
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .networkConnectionLost,
            .notConnectedToInternet, .resourceUnavailable, .internationalRoamingOff, .callIsActive,
            .dataNotAllowed:
            return HTTPTransportError(.connectionFailed, "connection failed (URLError \(urlError.code.rawValue))")
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected,
            .clientCertificateRequired:
            return HTTPTransportError(.tlsFailed, "TLS failed (URLError \(urlError.code.rawValue))")
        case .badServerResponse, .cannotParseResponse, .zeroByteResource, .cannotDecodeContentData,
            .cannotDecodeRawData:
            return HTTPTransportError(.invalidResponse, "unusable response (URLError \(urlError.code.rawValue))")
        default:
            return HTTPTransportError(.failed, "request failed (URLError \(urlError.code.rawValue))")
        }
    }
}
