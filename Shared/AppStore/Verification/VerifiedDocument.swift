import Foundation

/// A verified payload together with the JSON it was decoded from, so that it can be stored or printed
/// exactly as Apple sent it, unknown fields included.
public struct VerifiedDocument<Payload: Sendable>: Sendable {
    public let payload: Payload
    /// The payload segment's JSON, as signed.
    public let json: Data

    public init(payload: Payload, json: Data) {
        self.payload = payload
        self.json = json
    }
}
