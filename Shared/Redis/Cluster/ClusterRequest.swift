/// One command's way through a Redis Cluster, as a value: where it goes next, how many redirections it followed,
/// whether its libraries were reloaded, its retry window and backoff, and the node whose answer is its outcome.
/// ``ClusterRouter`` moves it along; ``RedisClusterClient`` only sends where it says.
package struct ClusterRequest: Sendable {
    package typealias Endpoint = RedisConfiguration.Endpoint

    /// Where the next try goes.
    package enum Start: Sendable, Hashable {
        /// The primary of the command's route by the slot map.
        case route
        /// This node (after `MOVED`, or the node that just got its libraries again).
        case node(Endpoint)
        /// This node, with `ASKING` first (after `ASK`).
        case asking(Endpoint)
    }

    /// Who retries what the node refused.
    package enum Retries: Sendable, Hashable {
        /// The cluster client: `TRYAGAIN`, `CLUSTERDOWN` and an unreachable node are sent again after a backoff until
        /// the ``deadline``.
        case withinWindow
        /// A ``ClusterReader`` (one dedicated connection, a consumer's read loop above it): those are thrown to the
        /// caller, whose loop backs off and reads again, after the connection is dropped where the node may be gone;
        /// an `UNBLOCKED` blocked read (its stream migrated away) is sent again once, by a refreshed map.
        case byCaller
    }

    package let route: ClusterRoute
    package let retries: Retries
    /// `FCALL`/`FCALL_RO`: a `Function not found` reply may be answered by reloading the libraries.
    package let isFunctionCall: Bool
    package var next: Start
    /// Redirections followed since the start or the last backoff.
    package internal(set) var redirections = 0
    /// Whether the libraries were already reloaded once for this command.
    package private(set) var reloaded = false
    /// Whether an `UNBLOCKED` read was already sent again (``Retries/byCaller``).
    package internal(set) var unblocked = false
    /// The node whose answer (a reply, a server error, or none: ``RedisError/unknownOutcome(_:)``) is the outcome,
    /// so a pipeline's `WAIT` can cover it; nil while no node answered.
    package internal(set) var landedOn: Endpoint?
    /// When `TRYAGAIN`, `CLUSTERDOWN` and an unreachable node stop being retried.
    package let deadline: ContinuousClock.Instant
    private var backoff: ReconnectBackoff

    package init(
        _ command: RedisCommand, route: ClusterRoute, start: Start = .route, retries: Retries = .withinWindow,
        deadline: ContinuousClock.Instant
    ) {
        self.init(
            route: route, start: start, isFunctionCall: command.name == "FCALL" || command.name == "FCALL_RO", retries: retries,
            deadline: deadline)
    }

    package init(
        route: ClusterRoute, start: Start = .route, isFunctionCall: Bool = false, retries: Retries = .withinWindow,
        deadline: ContinuousClock.Instant
    ) {
        self.route = route
        self.retries = retries
        self.isFunctionCall = isFunctionCall
        next = start
        self.deadline = deadline
        backoff = ReconnectBackoff()
        backoff.base = .milliseconds(10)
        backoff.cap = .milliseconds(200)
    }

    /// The next jittered delay (equal jitter, 10–200 ms), or nil when sleeping it from `now` would pass the deadline:
    /// then the last error is thrown.
    package mutating func backOff<G: RandomNumberGenerator>(now: ContinuousClock.Instant, using generator: inout G) -> Duration? {
        backoff.recordFailure()
        let delay = backoff.delay(using: &generator)
        return now + delay < deadline ? delay : nil
    }

    package mutating func backOff(now: ContinuousClock.Instant) -> Duration? {
        var generator = SystemRandomNumberGenerator()
        return backOff(now: now, using: &generator)
    }

    /// After the libraries were loaded again on `node`: the command goes there again, and this happens once.
    package mutating func librariesReloaded(on node: Endpoint) {
        reloaded = true
        next = .node(node)
    }
}
