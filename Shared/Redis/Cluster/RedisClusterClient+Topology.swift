package import Logging
import Synchronization

extension RedisClusterClient {
    /// Reads the slot map and connects to every primary now, to fail fast at startup.
    package func connect() async throws {
        let map = try await refresh()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for primary in map.allPrimaries {
                let connection = try self.connection(to: primary)
                group.addTask { try await connection.connect() }
            }
            try await group.waitForAll()
        }
    }

    /// Whether the first seed that answers runs with `cluster-enabled yes` (`INFO cluster`), so a service can
    /// pick this client or a ``RedisPool`` from `TOLLGATE_REDIS_URL` alone. Throws
    /// ``RedisError/connectionFailed(_:)`` when no seed answers.
    package static func isClusterEnabled(configuration: RedisConfiguration, logger: Logger) async throws -> Bool {
        var lastError: any Error = RedisError.connectionFailed("no seed in \(configuration)")
        for seed in configuration.seeds {
            let connection = RedisConnection(configuration: configuration.node(seed), logger: logger)
            defer { connection.close() }
            do {
                let info = try await connection.send("INFO", "cluster").string ?? ""
                return info.split(whereSeparator: \.isNewline).contains { $0.hasPrefix("cluster_enabled:1") }
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// The connection to `node`, created on first use.
    func connection(to node: Endpoint) throws -> RedisConnection {
        try state.withLock { state in
            if state.closed { throw RedisError.closed }
            if let connection = state.connections[node] { return connection }
            let connection = RedisConnection(configuration: configuration.node(node), logger: logger)
            state.connections[node] = connection
            return connection
        }
    }

    /// The primary for `route` by the current map (read first if there is none yet). A slot no primary serves
    /// goes to any primary, whose `MOVED` or `CLUSTERDOWN` is then handled like any other.
    func primary(for route: ClusterRoute) async throws -> Endpoint {
        if let primary = state.withLock({ $0.router.primary(for: route) }) { return primary }
        _ = try await refresh()
        guard let primary = state.withLock({ $0.router.primary(for: route) }) else {
            throw RedisError.connectionFailed("the cluster has no primary serving slots")
        }
        return primary
    }

    /// Reads the slot map (``readSlotMap(from:)``) from the first node that answers (reachable known nodes, then the
    /// seeds, then nodes that recently failed) and installs it; concurrent callers share one read.
    @discardableResult
    func refresh() async throws -> ClusterSlotMap {
        let task: Task<ClusterSlotMap, any Error> = try state.withLock { state in
            if state.closed { throw RedisError.closed }
            if let task = state.refreshing { return task }
            let task = Task { try await self.readSlotMap() }
            state.refreshing = task
            return task
        }
        return try await task.value
    }

    /// Starts a refresh in the background: after `MOVED` at most once a second (`force` false), after a lost
    /// connection at once.
    func scheduleRefresh(force: Bool) {
        let due = state.withLock { state in
            guard !state.closed, state.refreshing == nil else { return false }
            if !force, let last = state.lastRefresh, ContinuousClock.now - last < .seconds(1) { return false }
            return true
        }
        guard due else { return }
        Task { _ = try? await self.refresh() }
    }

    private func readSlotMap() async throws -> ClusterSlotMap {
        let candidates = state.withLock { $0.router.refreshCandidates(seeds: configuration.seeds) }
        var lastError: any Error = RedisError.connectionFailed("no cluster node to ask")
        for node in candidates {
            do {
                let map = try await readSlotMap(from: node)
                guard !map.isEmpty else { throw RedisError.protocolError("the slot map from \(node) lists no slots") }
                state.withLock { state in
                    state.router.install(map, from: node)
                    state.refreshing = nil
                    state.lastRefresh = .now
                }
                return map
            } catch RedisError.closed {
                lastError = RedisError.closed
                break
            } catch {
                lastError = error
                if case RedisError.connectionFailed = error { state.withLock { $0.router.markUnreachable(node) } }
            }
        }
        state.withLock { $0.refreshing = nil }
        throw lastError
    }

    /// `CLUSTER SHARDS` from `node`; `CLUSTER SLOTS` when `node` answers that with an error reply. `CLUSTER SLOTS` is
    /// deprecated since Redis 7.0, which added `CLUSTER SHARDS`; a server before 7.0 (or a proxy that lacks it)
    /// answers `ERR unknown subcommand`, and is then asked with `CLUSTER SLOTS` — from then on directly, without
    /// asking for `SHARDS` at each refresh. Only an error reply falls back: an I/O failure is the node's, not the
    /// command's, and is handled like any other by the caller.
    private func readSlotMap(from node: Endpoint) async throws -> ClusterSlotMap {
        let connection = try connection(to: node)
        if !state.withLock({ $0.slotsOnly }) {
            do {
                return try ClusterSlotMap(clusterShards: try await connection.send("CLUSTER", "SHARDS"), fallbackHost: node.host)
            } catch RedisError.server(let code, _) {
                logger.info(
                    "redis cluster node refused CLUSTER SHARDS; reading CLUSTER SLOTS",
                    metadata: ["redis.node": "\(node)", "redis.error": "\(code)"])
                state.withLock { $0.slotsOnly = true }
            }
        }
        return try ClusterSlotMap(clusterSlots: try await connection.send("CLUSTER", "SLOTS"), fallbackHost: node.host)
    }
}
