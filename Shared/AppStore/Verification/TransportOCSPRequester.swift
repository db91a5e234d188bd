import Foundation
package import HTTPClient
package import X509

/// Asks OCSP responders over HTTP POST (`application/ocsp-request`) through an ``HTTPTransport`` — the verifier
/// passes the one it calls Apple with, so OCSP shares its connections. Any transport failure or non-200 answer
/// is a terminal error, which the verifier reports as `retryable_ocsp`: the answer is unknown, not negative.
/// `timeout` bounds the time per query.
package struct TransportOCSPRequester: OCSPRequester {
    package struct QueryError: Error, CustomStringConvertible {
        package var description: String
    }

    private let transport: any HTTPTransport
    private let timeout: Duration

    package init(transport: any HTTPTransport, timeout: Duration = .seconds(10)) {
        self.transport = transport
        self.timeout = timeout
    }

    package func query(request: [UInt8], uri: String) async -> OCSPRequesterQueryResult {
        guard let url = URL(string: uri), url.scheme == "http" || url.scheme == "https" else {
            return .terminalError(QueryError(description: "OCSP responder URI is not HTTP: \(uri)"))
        }
        let httpRequest = HTTPTransportRequest(
            method: .post, url: url, headers: ["Content-Type": "application/ocsp-request"], body: Data(request),
            timeout: timeout)
        do {
            let response = try await transport.send(httpRequest)
            guard response.status == 200 else {
                return .terminalError(QueryError(description: "OCSP responder answered HTTP \(response.status)"))
            }
            return .response(Array(response.body))
        } catch {
            return .terminalError(QueryError(description: "OCSP request failed: \(error)"))
        }
    }
}
