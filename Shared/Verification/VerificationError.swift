import Core

/// An error of the verifier's passes and operator commands, with a stable `code` and a message, reported as
/// `<code>: <message>` (`tollctl: error: <code>: <message>` by tollctl).
///
/// Reconcile passes and sweeps: `lease_held` (another replica is running a pass), `lease_lost` (the lease ran out
/// mid-pass; the next leader resumes from the checkpoint), `apple_unavailable` (Apple or the rate limit did not
/// answer; the pass is retried later), `api_not_configured`. Operator commands (``OrderLookup``,
/// ``TestNotificationCheck``, ``AccountTokenAssignment``, ``SubscriptionExtensions``): `api_not_configured`,
/// `invalid_user`, `invalid_order_id`, `environment_not_accepted`, `transaction_not_verified`, `extension_refused`…;
/// an operator call's job is rejected with its code as the failure code.
package struct VerificationError: TollgateError, Sendable {
    package var code: String
    package var message: String

    package init(_ code: String, _ message: String) {
        self.code = code
        self.message = message
    }

    package static let leaseHeld = VerificationError("lease_held", "another verifier holds the reconcile lease (a pass is running)")
    package static let leaseLost = VerificationError("lease_lost", "the reconcile lease was lost during the pass")

    /// An operator command with no App Store Server API key to ask Apple with.
    static let apiNotConfigured = VerificationError(
        "api_not_configured",
        "asking Apple needs an App Store Server API key (TOLLGATE_API_KEY_ID, TOLLGATE_API_ISSUER_ID, TOLLGATE_API_PRIVATE_KEY_PATH)")
}
