import Foundation
import X509

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Asks OCSP responders over HTTP POST (`application/ocsp-request`) with `URLSession` (libcurl on
/// Linux). Any transport failure or non-200 answer is a terminal error, which the verifier reports as
/// `retryable_ocsp`: the answer is unknown, not negative. The policy bounds the time per query.
package struct URLSessionOCSPRequester: OCSPRequester {
    package struct QueryError: Error, CustomStringConvertible {
        package var description: String
    }

    private let timeout: TimeInterval

    package init(timeout: TimeInterval = 10) {
        self.timeout = timeout
    }

    package func query(request: [UInt8], uri: String) async -> OCSPRequesterQueryResult {
        guard let url = URL(string: uri), url.scheme == "http" || url.scheme == "https" else {
            return .terminalError(QueryError(description: "OCSP responder URI is not HTTP: \(uri)"))
        }
        var httpRequest = URLRequest(url: url, timeoutInterval: timeout)
        httpRequest.httpMethod = "POST"
        httpRequest.setValue("application/ocsp-request", forHTTPHeaderField: "Content-Type")
        httpRequest.httpBody = Data(request)
        do {
            let (body, response) = try await URLSession.shared.data(for: httpRequest)
            guard let status = (response as? HTTPURLResponse)?.statusCode, status == 200 else {
                return .terminalError(
                    QueryError(description: "OCSP responder answered \(String(describing: (response as? HTTPURLResponse)?.statusCode))"))
            }
            return .response(Array(body))
        } catch {
            return .terminalError(QueryError(description: "OCSP request failed: \(error)"))
        }
    }
}
