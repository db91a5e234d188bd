import Foundation

/// What a fault does to one call.
struct FaultDecision: Sendable {
    var status: Int?
    var delay: Duration?
    var retryAfter: Int
    /// `api`: Apple's `errorCode` in the error body.
    var errorCode: Int? = nil
}
