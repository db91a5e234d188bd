/// What ``SignedDataVerifier/checkNotification(_:budget:)`` found: ingest stores a notification only when it is
/// `accepted`.
package enum NotificationDoorCheck: Sendable, Hashable {
    /// Apple signed it and it is a notification of this app; its `notificationUUID` (lowercased) is its identity:
    /// the signature can be spelled two ways (ECDSA's s and n − s), the identity only one.
    case accepted(notificationUUID: String)
    /// Not signed by a leaf chaining to a trusted root (or its certificates were not valid when it was signed).
    case badSignature(VerificationFailure)
    /// Signed by Apple, but not a notification, or one of another app or environment than this deployment's.
    case notForThisApp(VerificationFailure)
    /// The chain was not checked now (``ChainCheckBudget``): retry.
    case deferred(VerificationFailure)
}
