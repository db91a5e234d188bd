import Redis

/// The circuit breaker of one endpoint in one replica: after `threshold` failed attempts in a row it opens, and while
/// it is open nothing is taken for the endpoint (a down endpoint costs no requests and no Redis work); when the
/// cooldown ends one probe goes (half open): its success closes the breaker, its failure opens it again for twice
/// as long, up to `maximumCooldown`. An opening is shared with the endpoint's other replicas through Redis: each
/// adopts the latest one published (``adopt(openUntil:now:)``), so a down endpoint costs the fleet what it costs one
/// replica. A value type: tests drive it with times, without servers.
package struct CircuitBreaker: Sendable, Hashable {
    /// What the loop may take now.
    package enum Allowance: Sendable, Hashable {
        /// Up to the concurrency limit.
        case closed
        /// One probe, and only if none is in flight.
        case probe
        /// Nothing until `until` (ms).
        case open(until: Int64)
    }

    package var threshold: Int
    package var cooldown: Duration
    package var maximumCooldown: Duration
    private(set) var failures = 0
    private(set) var openUntil: Int64?
    private(set) var opened = 0
    private(set) var probing = false

    package init(threshold: Int = 5, cooldown: Duration = .seconds(5), maximumCooldown: Duration = .seconds(300)) {
        self.threshold = max(1, threshold)
        self.cooldown = cooldown
        self.maximumCooldown = maximumCooldown
    }

    /// What may be sent at `now`.
    package func allowance(now: Int64) -> Allowance {
        guard let openUntil else { return .closed }
        if now < openUntil { return .open(until: openUntil) }
        return probing ? .open(until: now + 100) : .probe
    }

    /// The probe a `.probe` allowance permitted is on its way: no other goes until it ends.
    package mutating func beginProbe() {
        probing = true
    }

    /// The probe ended without a request (its entry was not sendable yet: blocked, busy, filtered): another may go.
    package mutating func endProbe() {
        probing = false
    }

    /// Another replica's breaker for the endpoint is open until `until` (ms): this one opens until then too, unless it
    /// already is open longer or `until` has passed. It counts as an opening, so a failed probe afterwards doubles the
    /// wait as after one of its own; a probe in flight keeps its say.
    package mutating func adopt(openUntil until: Int64, now: Int64) {
        guard until > now, until > (openUntil ?? Int64.min) else { return }
        openUntil = until
        opened = max(opened, 1)
    }

    /// Whether the breaker is open now (for the metric).
    package var isOpen: Bool { openUntil != nil }

    package mutating func recordSuccess() {
        failures = 0
        openUntil = nil
        opened = 0
        probing = false
    }

    /// A failed attempt. While open, only the probe's failure counts (it opens the breaker again, twice as long):
    /// the requests that were already in flight when it opened end in failures too, and must not stretch it.
    package mutating func recordFailure(now: Int64) {
        failures += 1
        if openUntil != nil {
            guard probing else { return }
        } else {
            guard failures >= threshold else { return }
        }
        let factor = Int64(1) << Int64(min(opened, 20))
        let wait = min(cooldown.milliseconds * factor, maximumCooldown.milliseconds)
        openUntil = now + wait
        opened += 1
        probing = false
    }
}
