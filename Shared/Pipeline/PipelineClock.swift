import Foundation

/// The wall clock and random source the runtime decides with, injectable for tests.
package struct PipelineClock: Sendable {
    /// Milliseconds since 1970 (retry due times, dead-letter timestamps, trim windows).
    package var nowMilliseconds: @Sendable () -> Int64
    /// A uniform random number in `[0, 1)` (backoff jitter).
    package var unitRandom: @Sendable () -> Double

    package init(nowMilliseconds: @escaping @Sendable () -> Int64, unitRandom: @escaping @Sendable () -> Double) {
        self.nowMilliseconds = nowMilliseconds
        self.unitRandom = unitRandom
    }

    /// The system clock and random number generator.
    package static let system = PipelineClock(
        nowMilliseconds: { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) },
        unitRandom: { Double.random(in: 0..<1) }
    )
}
