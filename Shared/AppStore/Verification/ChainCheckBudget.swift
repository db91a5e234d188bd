import Foundation
import Synchronization

/// How many certificate checks a caller may spend on chains never seen before: a token bucket, one token per
/// signature check of an intermediate or a leaf that is in no cache (``ChainCache``). Ingest gives its anonymous
/// door one, so that strangers sending a fresh broken chain with every request cost a cache lookup once the bucket
/// is empty, not a P-384 verification each (about 0.5 ms, more than the whole request of a forgery on a known
/// chain); the check is then retryable (`503`, Apple retries). A genuine chain needs two tokens once: the
/// intermediate and the leaf, after which it is cached.
package final class ChainCheckBudget: Sendable {

    package let ratePerSecond: Double
    package let capacity: Double
    /// The tokens left, and when they were last topped up.
    private let bucket: Mutex<(tokens: Double, refilled: ContinuousClock.Instant)>
    private let now: @Sendable () -> ContinuousClock.Instant

    /// - Parameters:
    ///   - ratePerSecond: tokens added per second.
    ///   - capacity: the most tokens held (the burst), and the tokens at the start.
    package init(
        ratePerSecond: Double, capacity: Double, now: @escaping @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }
    ) {
        self.ratePerSecond = max(0, ratePerSecond)
        self.capacity = max(1, capacity)
        self.now = now
        bucket = Mutex((tokens: max(1, capacity), refilled: now()))
    }

    /// Takes one token; false when none is left.
    package func take() -> Bool {
        let instant = now()
        return bucket.withLock { bucket in
            let elapsed = bucket.refilled.duration(to: instant)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            if seconds > 0 {
                bucket.tokens = min(capacity, bucket.tokens + seconds * ratePerSecond)
                bucket.refilled = instant
            }
            guard bucket.tokens >= 1 else { return false }
            bucket.tokens -= 1
            return true
        }
    }
}
