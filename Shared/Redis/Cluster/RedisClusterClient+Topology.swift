import Logging
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
        var map = state.withLock { $0.map }
        if map.isEmpty { map = try await refresh() }
        if case .slot(let slot) = route, let primary = map.primaries[slot] { return primary }
        let primaries = map.allPrimaries
        guard !primaries.isEmpty else { throw RedisError.connectionFailed("the cluster has no primary serving slots") }
        return state.withLock { state in
            state.nextPrimary += 1
            return primaries[state.nextPrimary % primaries.count]
        }
    }

    /// Reads `CLUSTER SLOTS` from the first node that answers (reachable known nodes, then the seeds, then
    /// nodes that recently failed) and installs it; concurrent callers share one read.
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
        let (known, unreachable) = state.withLock { ($0.map.allNodes, $0.unreachable) }
        var candidates: [Endpoint] = []
        for node in known + configuration.seeds where !candidates.contains(node) && !unreachable.contains(node) {
            candidates.append(node)
        }
        candidates += (known + configuration.seeds).filter { unreachable.contains($0) && !candidates.contains($0) }
        var lastError: any Error = RedisError.connectionFailed("no cluster node to ask")
        for node in candidates {
            do {
                let reply = try await connection(to: node).send("CLUSTER", "SLOTS")
                let map = try ClusterSlotMap(clusterSlots: reply, fallbackHost: node.host)
                guard !map.isEmpty else { throw RedisError.protocolError("CLUSTER SLOTS from \(node) lists no slots") }
                state.withLock { state in
                    state.map = map
                    state.unreachable.remove(node)
                    state.refreshing = nil
                    state.lastRefresh = .now
                    state.counters.refreshes += 1
                }
                return map
            } catch RedisError.closed {
                lastError = RedisError.closed
                break
            } catch {
                lastError = error
                if case RedisError.connectionFailed = error { state.withLock { _ = $0.unreachable.insert(node) } }
            }
        }
        state.withLock { $0.refreshing = nil }
        throw lastError
    }
}
