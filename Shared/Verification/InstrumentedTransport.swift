import AppStore
import Foundation
import HTTPClient

/// An ``HTTPTransport`` that records each call to Apple in ``VerifierMetrics`` (latency, HTTP status or
/// transport error) and passes it to the real transport. Logs nothing: bodies hold receipts and tokens.
struct InstrumentedTransport: HTTPTransport {
    let base: any HTTPTransport
    let metrics: VerifierMetrics

    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse {
        let endpoint = request.url.path.hasSuffix("verifyReceipt") ? "verifyReceipt" : "api"
        let started = ContinuousClock.now
        do {
            let response = try await base.send(request)
            metrics.appleRequest(endpoint: endpoint, status: String(response.status), duration: ContinuousClock.now - started)
            return response
        } catch let error as HTTPTransportError {
            metrics.appleRequest(endpoint: endpoint, status: error.code.rawValue, duration: ContinuousClock.now - started)
            throw error
        }
    }
}
