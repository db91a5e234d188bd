/// One fleet-wide token bucket: `capacity` tokens, refilled at `ratePerSecond`, kept in one Redis key so
/// that every replica draws from the same bucket.
package struct TokenBucket: Sendable, Hashable {
    /// The bucket's Redis key, e.g. `tg:{rl:transactionInfo}:production` (its own hash tag).
    package var key: String
    /// Tokens added per second (may be fractional).
    package var ratePerSecond: Double
    /// The most tokens the bucket holds (the largest burst).
    package var capacity: Double

    package init(key: String, ratePerSecond: Double, capacity: Double) {
        self.key = key
        self.ratePerSecond = max(0.001, ratePerSecond)
        self.capacity = max(1, capacity)
    }
}
