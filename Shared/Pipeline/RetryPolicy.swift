import Redis

/// Exponential backoff with full jitter: the delay after failed attempt `n` (1-based) is uniformly random
/// in `[0, min(cap, base · 2^(n-1))]`. After `maxAttempts` failed attempts the entry is dead-lettered.
package struct RetryPolicy: Sendable, Hashable {
    /// The ceiling of the first retry's delay.
    package var base: Duration
    /// The largest delay ever used.
    package var cap: Duration
    /// Attempts in total, the first included; a failure of the last one dead-letters the entry.
    package var maxAttempts: Int

    package init(base: Duration = .seconds(1), cap: Duration = .seconds(300), maxAttempts: Int = 8) {
        self.base = base
        self.cap = cap
        self.maxAttempts = max(1, maxAttempts)
    }

    /// The upper bound of the delay after failed attempt `attempt` (1-based): `min(cap, base · 2^(attempt-1))`.
    package func ceiling(afterAttempt attempt: Int) -> Duration {
        let exponent = min(max(0, attempt - 1), 62)
        let baseMilliseconds = Double(base.milliseconds)
        let grown = baseMilliseconds * Double(UInt64(1) << UInt64(exponent))
        return .milliseconds(Int64(min(Double(cap.milliseconds), grown)))
    }

    /// The delay after failed attempt `attempt`, given `unitRandom` in `[0, 1)` (full jitter).
    package func delay(afterAttempt attempt: Int, unitRandom: Double) -> Duration {
        let fraction = min(max(unitRandom, 0), 1)
        let ceiling = Double(ceiling(afterAttempt: attempt).milliseconds)
        return .milliseconds(Int64((ceiling * fraction).rounded(.down)))
    }
}
