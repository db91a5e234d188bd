import Core

/// Why a reconcile pass stopped, with a stable `code`: `lease_held` (another replica is running a pass),
/// `lease_lost` (the lease ran out mid-pass; the next leader resumes from the checkpoint), `apple_unavailable`
/// (Apple or the rate limit did not answer; the pass is retried later), `api_not_configured`.
package struct ReconcileError: TollgateError, Sendable {
    package var code: String
    package var message: String

    package init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }

    package static let leaseHeld = ReconcileError("lease_held", "another verifier holds the reconcile lease (a pass is running)")
    package static let leaseLost = ReconcileError("lease_lost", "the reconcile lease was lost during the pass")
}
