extension AppStoreAPIError {
    /// The error as a verification failure with the same code and message.
    public var verificationFailure: VerificationFailure {
        VerificationFailure(FailureCode(rawValue: code.rawValue), message)
    }

    /// The error as a verification outcome: `.retryable` when ``isRetryable``, else `.rejected`.
    public func verificationResult<Value: Sendable>(as type: Value.Type = Value.self) -> VerificationResult<Value> {
        isRetryable ? .retryable(verificationFailure) : .rejected(verificationFailure)
    }
}
