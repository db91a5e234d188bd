/// Asked before each call to Apple made for one piece of work (a user's receipt: `verifyReceipt`, each page of a
/// history): `nil` to go ahead, or why not now. Tollgate bounds what one user can make it ask Apple this way
/// (`TOLLGATE_USER_APPLE_CALLS`).
package typealias AppleCallGate = @Sendable () async -> AppleCallRefusal?

/// Why a call to Apple was not made now: a retryable failure, and when to try again.
package struct AppleCallRefusal: Error, Sendable {
    package var failure: VerificationFailure
    package var retryAfter: Duration?

    package init(_ failure: VerificationFailure, retryAfter: Duration?) {
        self.failure = failure
        self.retryAfter = retryAfter
    }
}
