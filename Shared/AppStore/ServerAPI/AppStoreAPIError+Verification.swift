extension AppStoreAPIError {
    /// The error as a verification failure with the same code and message.
    package var verificationFailure: VerificationFailure {
        VerificationFailure(FailureCode(rawValue: code.rawValue), message)
    }

    /// The error as a verification outcome: `.retryable` when ``isRetryable``, else `.rejected`.
    package func verificationResult<Value: Sendable>(as type: Value.Type = Value.self) -> VerificationResult<Value> {
        isRetryable ? .retryable(verificationFailure) : .rejected(verificationFailure)
    }
}
