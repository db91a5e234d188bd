import Core

/// What a verification decided about a piece of Apple data: it is genuine and meant for us, it never will
/// be (permanent), or the answer is not known yet and asking again later may change it (retryable).
///
/// Verification returns this value rather than throwing; throwing is kept for infrastructure faults.
package enum VerificationResult<Value: Sendable>: Sendable {
    case verified(Value)
    case rejected(VerificationFailure)
    case retryable(VerificationFailure)

    /// The verified value, or `nil`.
    package var value: Value? {
        if case .verified(let value) = self { return value }
        return nil
    }

    /// The failure of a rejected or retryable outcome, or `nil` when verified.
    package var failure: VerificationFailure? {
        switch self {
        case .verified: return nil
        case .rejected(let failure), .retryable(let failure): return failure
        }
    }

    /// Transforms the verified value, keeping failures as they are.
    package func map<Other: Sendable>(_ transform: (Value) throws -> Other) rethrows -> VerificationResult<Other> {
        switch self {
        case .verified(let value): return .verified(try transform(value))
        case .rejected(let failure): return .rejected(failure)
        case .retryable(let failure): return .retryable(failure)
        }
    }
}

/// Why Apple data was not accepted: a stable machine code and a human message.
package struct VerificationFailure: TollgateError, Sendable, Hashable {
    package var code: FailureCode
    package var message: String

    package init(_ code: FailureCode, _ message: String) {
        self.code = code
        self.message = message
    }

}
