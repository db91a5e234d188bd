/// What a handler decided about one stream entry; the runtime applies it atomically with the ack.
package enum HandlerOutcome: Sendable {
    /// Done: acknowledge and apply `writes` (hand-off to the next stage, job status…) in one step.
    case complete(writes: [PipelineWrite])
    /// Try again later. The runtime alone decides when: the policy's backoff (full jitter), or `notBefore` when
    /// longer (Apple's `Retry-After`). It hands that decision (``RetrySchedule``) to `writes`, whose writes
    /// (e.g. status `retrying` with `next.at`) are applied atomically with the scheduling, so what they record is
    /// exactly what happens. On the last attempt this becomes a dead letter (with the consumer's dead-letter
    /// writes instead).
    case retry(reason: String, notBefore: Duration? = nil, writes: @Sendable (RetrySchedule) -> [PipelineWrite] = { _ in [] })
    /// Give up: move the entry to the dead-letter stream with `reason`, applying `writes`.
    case deadLetter(reason: String, writes: [PipelineWrite] = [])
    /// Leave the entry pending: it is reclaimed after the claim min-idle time (counts as a delivery).
    case abandon
    /// The handler acknowledged the entry itself, atomically with its own writes (the ledger function does);
    /// nothing is left for the runtime to do. `duplicate`: another consumer had acknowledged it first.
    case acknowledged(duplicate: Bool)

    /// Acknowledge with no writes.
    package static var complete: HandlerOutcome { .complete(writes: []) }
}
