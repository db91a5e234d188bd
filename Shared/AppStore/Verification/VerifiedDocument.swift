package import Foundation

/// A verified payload together with the JSON it was decoded from, so that it can be stored or printed
/// exactly as Apple sent it, unknown fields included.
package struct VerifiedDocument<Payload: Sendable>: Sendable {
    package let payload: Payload
    /// The payload segment's JSON, as signed.
    package let json: Data

    package init(payload: Payload, json: Data) {
        self.payload = payload
        self.json = json
    }
}
