package import Pipeline
package import Synchronization

/// A time a test moves by hand (ms since 1970), and a ``PipelineClock`` that reads it, for decisions that depend on
/// time (STYLE.md: time is injected).
package final class ManualTime: Sendable {
    package let now: Mutex<Int64>

    package init(_ start: Int64) { now = Mutex(start) }

    /// A clock reading ``now``, with a fixed random number (0.5).
    package var clock: PipelineClock {
        PipelineClock(nowMilliseconds: { self.now.withLock { $0 } }, unitRandom: { 0.5 })
    }

    /// Moves ``now`` on by `milliseconds`.
    package func advance(milliseconds: Int64) { now.withLock { $0 += milliseconds } }
}
