/// What one call to Apple gave: its answer, or — when there was none (no key, Apple's error, the rate limit, the
/// network) — the verdict that stands for the job or the receipt instead (a ``VerificationOutcome`` or a
/// ``ReceiptValidation``). A value, not an error: it is returned, never thrown.
enum APIAnswer<Value: Sendable, Verdict: Sendable>: Sendable {
    case answered(Value)
    case unanswered(Verdict)
}
