/// Capped, jittered exponential backoff between reconnect attempts.
///
/// The first attempt after a healthy period is immediate; after `n` consecutive failures the next attempt
/// waits a random time between half and all of `min(cap, base · 2^(n-1))` ("equal jitter").
struct ReconnectBackoff: Sendable {
    var base: Duration = .milliseconds(50)
    var cap: Duration = .seconds(2)
    private(set) var consecutiveFailures = 0

    /// How long to wait before the next attempt.
    func delay<G: RandomNumberGenerator>(using generator: inout G) -> Duration {
        guard consecutiveFailures > 0 else { return .zero }
        var ceiling = base
        for _ in 1..<consecutiveFailures where ceiling < cap {
            ceiling *= 2
        }
        ceiling = min(ceiling, cap)
        let ceilingMicros = ceiling.microseconds
        let half = ceilingMicros / 2
        return .microseconds(half + Int64.random(in: 0...(ceilingMicros - half), using: &generator))
    }

    func delay() -> Duration {
        var generator = SystemRandomNumberGenerator()
        return delay(using: &generator)
    }

    mutating func recordFailure() { consecutiveFailures += 1 }
    mutating func recordSuccess() { consecutiveFailures = 0 }
}
