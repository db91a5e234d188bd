import Redis

/// When the runtime scheduled a retry: handed to ``HandlerOutcome/retry(reason:notBefore:writes:)``'s writes so
/// that a status they record (a job's `attempt` and `next.at`) is the schedule itself, not a guess at it.
package struct RetrySchedule: Sendable, Hashable {
    /// The attempt that comes next (1-based).
    package var attempt: Int
    /// How long from now.
    package var delay: Duration
    /// When the runtime decided, in milliseconds since 1970.
    package var scheduledAtMilliseconds: Int64
    /// When the entry is due back on its stream (`scheduledAt + delay`, the retry ZSET's score).
    package var dueMilliseconds: Int64 { scheduledAtMilliseconds + delay.milliseconds }

    package init(attempt: Int, delay: Duration, scheduledAtMilliseconds: Int64) {
        self.attempt = attempt
        self.delay = delay
        self.scheduledAtMilliseconds = scheduledAtMilliseconds
    }
}
