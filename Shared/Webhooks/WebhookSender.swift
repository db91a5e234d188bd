import Foundation
package import HTTPClient

/// Sends one signed webhook request and says how it went. Requests go through the process's ``HTTPClient/HTTPTransport``
/// (libcurl: no redirects followed, TLS verified, the response read up to its size limit).
package struct WebhookSender: Sendable {
    /// How one request went.
    package enum Attempt: Sendable, Equatable {
        /// A 2xx answered.
        case delivered(status: Int)
        /// Anything else: another status (with its `Retry-After`, if any), or no response at all.
        case failed(reason: String, status: Int?, retryAfter: Duration?)
    }

    /// The largest response (status line, headers, body) read; a bigger one fails the attempt.
    package static let maximumResponseSize = 8192

    package let transport: any HTTPTransport
    let timeout: Duration

    package init(transport: any HTTPTransport, timeout: Duration) {
        self.transport = transport
        self.timeout = timeout
    }

    /// A transport as the notifier and `tollctl webhooks` use it: responses of at most ``maximumResponseSize``.
    package static func makeTransport(connectionsPerHost: Int) -> any HTTPTransport {
        CurlTransport(maximumConnectionsPerHost: connectionsPerHost, maximumBodySize: maximumResponseSize)
    }

    /// The request for `body`, signed at `timestamp` (unix seconds) with every secret of `endpoint`, for its name
    /// (``WebhookSignature``). `Tollgate-Event-Id` is not signed: receivers deduplicate on the body's `id`.
    package func request(body: [UInt8], eventID: String, endpoint: WebhookEndpoint, timestamp: Int64) -> HTTPTransportRequest {
        HTTPTransportRequest(
            method: .post, url: endpoint.url,
            headers: [
                "Content-Type": "application/json",
                "User-Agent": "Tollgate-Webhooks/1",
                "Tollgate-Event-Id": eventID,
                WebhookSignature.header: WebhookSignature.sign(
                    body: body, secrets: endpoint.secrets, timestamp: timestamp, endpoint: endpoint.name),
            ],
            body: Data(body), timeout: timeout)
    }

    /// Posts `body` to `endpoint`; never throws (but on cancellation, which the caller sees as its own).
    package func send(body: [UInt8], eventID: String, to endpoint: WebhookEndpoint, timestamp: Int64) async throws -> Attempt {
        let request = request(body: body, eventID: eventID, endpoint: endpoint, timestamp: timestamp)
        do {
            let response = try await transport.send(request)
            if (200...299).contains(response.status) { return .delivered(status: response.status) }
            return .failed(reason: "status_\(response.status)", status: response.status, retryAfter: response.retryAfter())
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as HTTPTransportError {
            return .failed(reason: error.code.rawValue, status: nil, retryAfter: nil)
        } catch {
            return .failed(reason: "transport_failed", status: nil, retryAfter: nil)
        }
    }
}
