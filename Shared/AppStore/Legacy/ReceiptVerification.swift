/// What ``ReceiptClient/verify(_:)`` found: the outcome, plus what a retry scheduler and an operator need.
package struct ReceiptVerification: Sendable {
    /// The verified, normalized receipt; or why not (permanent), or why not yet (retryable).
    package var result: VerificationResult<VerifiedReceipt>
    /// For a retryable outcome caused by HTTP 429: the delay Apple asked for with `Retry-After`.
    package var retryAfter: Duration?
    /// The endpoints called, in order (e.g. `[production, sandbox]` after a `21007`).
    package var environmentsCalled: [AppStoreEnvironment]

    package init(
        result: VerificationResult<VerifiedReceipt>,
        retryAfter: Duration? = nil,
        environmentsCalled: [AppStoreEnvironment] = []
    ) {
        self.result = result
        self.retryAfter = retryAfter
        self.environmentsCalled = environmentsCalled
    }
}
