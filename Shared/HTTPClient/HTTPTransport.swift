/// Sends one HTTP request to Apple (or to whatever stands in for Apple) and returns the whole response.
///
/// The Apple clients talk to the network only through this protocol, so another transport (a curl multi
/// wrapper, a test double for an edge case) can be plugged in. ``CurlTransport`` is the default,
/// ``URLSessionTransport`` the fallback (``HTTPTransportKind``).
///
/// A transport returns every HTTP response, whatever its status; it throws ``HTTPTransportError`` only
/// when no response arrived (timeout, connection failure) and `CancellationError` when the task was
/// cancelled.
package protocol HTTPTransport: Sendable {
    func send(_ request: HTTPTransportRequest) async throws -> HTTPTransportResponse
}
