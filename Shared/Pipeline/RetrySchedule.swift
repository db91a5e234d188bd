/// When the runtime scheduled a retry: handed to ``HandlerOutcome/retry(reason:notBefore:writes:)``'s writes so
/// that a status they record (a job's `attempt` and `next.at`) is the schedule itself, not a guess at it.
public struct RetrySchedule: Sendable, Hashable {
    /// The attempt that comes next (1-based).
    public var attempt: Int
    /// How long from now.
    public var delay: Duration
    /// When the runtime decided, in milliseconds since 1970.
    public var scheduledAtMilliseconds: Int64
    /// When the entry is due back on its stream (`scheduledAt + delay`, the retry ZSET's score).
    public var dueMilliseconds: Int64 { scheduledAtMilliseconds + delay.milliseconds }

    public init(attempt: Int, delay: Duration, scheduledAtMilliseconds: Int64) {
        self.attempt = attempt
        self.delay = delay
        self.scheduledAtMilliseconds = scheduledAtMilliseconds
    }
}
