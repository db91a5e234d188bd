package import Logging
import ServiceLifecycle
import Synchronization

/// A Redis Cluster client: the ``RedisCommandExecutor`` the services use, over one multiplexed
/// ``RedisConnection`` per node (created when first needed), routing each command to the primary of its keys'
/// slot (``ClusterRoute``) by a slot map read with `CLUSTER SHARDS` (`CLUSTER SLOTS` from a server before Redis 7.0).
///
/// Redirections and retries, and why each is safe:
/// - `MOVED` and `ASK` replies mean the node did **not** execute the command (it checks the slot before
///   anything else), so the command is sent again: after `MOVED` to the named node, with the slot map patched
///   and a refresh scheduled; after `ASK` to the named node, preceded by `ASKING`, once, map unchanged. At most
///   `maxRedirections` in a row.
/// - `TRYAGAIN` (a multi-key command during a slot migration) and `CLUSTERDOWN` were not executed either: they
///   are retried after a jittered backoff (10–200 ms) until `retryWindow` has passed, then thrown.
/// - ``RedisError/connectionFailed(_:)`` means the command was never sent: the map is refreshed from any node
///   that answers (so a replica promoted after its primary died is followed) and the command is sent again,
///   until `retryWindow` has passed.
/// - ``RedisError/unknownOutcome(_:)`` (the connection died or timed out with the command in flight) is never
///   retried here, exactly as with one server: the command may have run. A refresh is scheduled for the next
///   command.
///
/// Every such decision (where a command or a pipeline's part goes, what an answer means, where a trailing `WAIT`
/// goes) is made without I/O by the value types ``ClusterRouter``, ``ClusterRequest`` and ``ClusterPipeline``, held
/// under this client's lock and unit tested without a server; this class only sends, sleeps and reads the map.
///
/// A command whose keys hash to different slots is refused before it is sent (``RedisError/crossSlot(_:)``).
/// `FUNCTION LOAD` goes to every primary, and the client remembers the library: a node that answers
/// `Function not found` (it restarted without its data, or was added later) gets every remembered library
/// again and the call is retried once.
package final class RedisClusterClient: RedisCommandExecutor, Service {
    package typealias Endpoint = RedisConfiguration.Endpoint

    /// How often each path ran, for tests, metrics and the chaos run's "the path ran" checks.
    package struct Counters: Sendable, Hashable {
        package var moved = 0
        package var ask = 0
        package var tryAgain = 0
        package var clusterDown = 0
        /// Commands that found their node unreachable (`connectionFailed`) and were sent again.
        package var unreachable = 0
        /// Slot maps read (`CLUSTER SHARDS`, or `CLUSTER SLOTS` from a server before Redis 7.0).
        package var refreshes = 0
        /// Nodes that were given the remembered libraries again after `Function not found`.
        package var functionReloads = 0

        package init() {}
    }

    struct State {
        /// The slot map, the nodes that recently failed, the counters, and every routing decision.
        var router: ClusterRouter
        var connections: [Endpoint: RedisConnection] = [:]
        var refreshing: Task<ClusterSlotMap, any Error>?
        var lastRefresh: ContinuousClock.Instant?
        /// A node refused `CLUSTER SHARDS` (a server before Redis 7.0): maps are read with `CLUSTER SLOTS` from now on.
        var slotsOnly = false
        /// Library name → source, from every `FUNCTION LOAD` sent through this client.
        var libraries: [String: String] = [:]
        var closed = false
    }

    package let configuration: RedisConfiguration
    /// Redirections followed for one command before its last error is thrown.
    package let maxRedirections: Int
    /// How long `TRYAGAIN`, `CLUSTERDOWN` and an unreachable node are retried for one command.
    package let retryWindow: Duration
    let state: Mutex<State>
    let logger: Logger

    /// - Parameters:
    ///   - configuration: the seeds (`host:port` and ``RedisConfiguration/additionalSeeds``) and what every
    ///     node connection uses (credentials, timeouts, name). The database must be 0 (Cluster has only 0).
    package init(
        configuration: RedisConfiguration, maxRedirections: Int = 5, retryWindow: Duration = .seconds(10),
        logger: Logger
    ) throws {
        guard configuration.database == 0 else {
            throw RedisError.invalidURL("Redis Cluster has only database 0, not \(configuration.database)")
        }
        self.configuration = configuration
        self.maxRedirections = max(maxRedirections, 1)
        self.retryWindow = retryWindow
        self.logger = logger
        state = Mutex(State(router: ClusterRouter(maxRedirections: maxRedirections)))
    }

    package var commandTimeout: Duration { configuration.commandTimeout }

    /// A snapshot of the counters.
    package var counters: Counters { state.withLock { $0.router.counters } }

    /// The current slot map (empty until the first command or ``connect()``).
    package var slotMap: ClusterSlotMap { state.withLock { $0.router.map } }

    package func send(_ command: RedisCommand, timeout: Duration?) async throws -> RedisReply {
        guard !command.arguments.isEmpty else { throw RedisError.protocolError("empty command") }
        let route = try ClusterRoute.of(command)
        if route == .everyPrimary { return try await sendToEveryPrimary(command, timeout: timeout) }
        return try await execute(command, route: route, timeout: timeout, start: .route)
    }

    /// Where ``execute(_:route:timeout:start:)`` sends a command first.
    typealias Start = ClusterRequest.Start

    /// Sends `command` and follows redirections and retryable refusals (see the type's comment).
    func execute(_ command: RedisCommand, route: ClusterRoute, timeout: Duration?, start: Start) async throws -> RedisReply {
        var landedOn: Endpoint?
        return try await execute(command, route: route, timeout: timeout, start: start, landedOn: &landedOn)
    }

    /// ``execute(_:route:timeout:start:)``, setting `landedOn` to the node whose answer (a reply, a server error, or
    /// none: ``RedisError/unknownOutcome(_:)``) is the outcome, so a pipeline's `WAIT` can cover it. The decisions
    /// are ``ClusterRouter``'s; this only sends, sleeps and refreshes where it says.
    func execute(
        _ command: RedisCommand, route: ClusterRoute, timeout: Duration?, start: Start, landedOn: inout Endpoint?
    ) async throws -> RedisReply {
        var request = ClusterRequest(command, route: route, start: start, deadline: .now + retryWindow)
        defer { landedOn = request.landedOn }
        while true {
            let (node, asking) = try await destination(of: &request)
            do {
                let reply = try await attempt(command, on: node, asking: asking, timeout: timeout)
                state.withLock { $0.router.answered(by: node, request: &request) }
                return reply
            } catch let error as RedisError {
                let decision = failed(error, on: node, request: &request)
                if case .connectionFailed = error {
                    logger.debug("redis cluster node unreachable", metadata: ["redis.node": "\(node)"])
                }
                await perform(decision.refresh)
                switch decision.next {
                case .send:
                    continue
                case .backOff:
                    guard let delay = request.backOff(now: .now) else { throw error }
                    try await Task.sleep(for: delay)
                case .reloadLibraries:
                    guard try await reloadLibraries(on: node) else { throw error }
                    request.librariesReloaded(on: node)
                case .fail:
                    throw error
                }
            }
        }
    }

    /// Where `request` goes now, reading the slot map first when there is none yet.
    private func destination(of request: inout ClusterRequest) async throws -> (node: Endpoint, asking: Bool) {
        if let destination = state.withLock({ $0.router.destination(of: &request) }) { return destination }
        _ = try await refresh()
        guard let destination = state.withLock({ $0.router.destination(of: &request) }) else {
            throw RedisError.connectionFailed("the cluster has no primary serving slots")
        }
        return destination
    }

    /// One try on one node; `ASKING` first (pipelined with the command) after an `ASK` redirection. A call
    /// that would hold its connection (a blocking read, `WAIT`, or any call given its own timeout, as
    /// ``RedisPool`` decides) gets a connection of its own for the call, so nothing queues behind it on the
    /// node's shared connection.
    private func attempt(_ command: RedisCommand, on node: Endpoint, asking: Bool, timeout: Duration?) async throws -> RedisReply {
        if timeout != nil || command.isBlocking {
            try state.withLock { if $0.closed { throw RedisError.closed } }
            let dedicated = RedisConnection(configuration: configuration.node(node), logger: logger)
            defer { dedicated.close() }
            if asking { _ = try await dedicated.send(RedisCommand("ASKING")) }
            return try await dedicated.send(command, timeout: timeout)
        }
        let connection = try self.connection(to: node)
        guard asking else { return try await connection.send(command, timeout: timeout) }
        let replies = try await connection.pipeline([RedisCommand("ASKING"), command])
        guard replies.count == 2 else { throw RedisError.protocolError("ASKING pipeline returned \(replies.count) replies") }
        if case .error(let text) = replies[1] { throw RedisError.fromErrorReply(text) }
        return replies[1]
    }

    /// ``ClusterRouter/failed(_:on:request:)``, under the lock: what to do after `request`'s try on `node` failed.
    func failed(_ error: RedisError, on node: Endpoint, request: inout ClusterRequest) -> ClusterRouter.Decision {
        state.withLock { $0.router.failed(error, on: node, request: &request) }
    }

    /// Records a redirection (``ClusterRouter/follow(_:)``) and says where to send next; after `MOVED` a refresh is
    /// scheduled.
    func follow(_ redirect: ClusterRedirect) -> Start {
        let next = state.withLock { $0.router.follow(redirect) }
        if redirect.kind == .moved { scheduleRefresh(force: false) }
        return next
    }

    /// Counts a `TRYAGAIN` or `CLUSTERDOWN`.
    func countRefusal(_ code: String) {
        state.withLock { $0.router.countRefusal(code) }
    }

    /// Starts, or reads and waits for, the refresh a decision asks for.
    func perform(_ refresh: ClusterRouter.Decision.Refresh) async {
        switch refresh {
        case .none: break
        case .inBackground(let force): scheduleRefresh(force: force)
        case .beforeNext: _ = try? await self.refresh()
        }
    }

    /// Closes every node connection; later calls throw ``RedisError/closed``.
    package func close() {
        let connections = state.withLock { state in
            state.closed = true
            state.refreshing?.cancel()
            return Array(state.connections.values)
        }
        for connection in connections { connection.close() }
    }

    package func run() async throws {
        try? await gracefulShutdown()
        logger.info("closing redis cluster client")
        close()
    }
}
