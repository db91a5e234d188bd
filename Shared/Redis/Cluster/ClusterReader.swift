import Logging
import Synchronization

/// A dedicated connection to the primary of one key's slot, for a consumer's blocking reads of one stream
/// partition on a Redis Cluster: it keeps one ``RedisConnection`` to that primary (no connection per read) and
/// re-targets it when the slot moves.
///
/// What an error means and what to do is ``ClusterRouter``'s decision for a request that retries
/// ``ClusterRequest/Retries/byCaller`` (unit tested without a server in `ClusterReaderDecisionTests`); the reader
/// only performs it:
/// - `MOVED`: the slot map is patched (a refresh scheduled) and the command is sent again on a connection to the new
///   owner; nothing ran on the old one.
/// - `ASK` (the slot is migrating and this key has left): this one command goes through the client, which sends
///   `ASKING` and the command on a connection of its own to the importing node; the target is unchanged.
/// - `UNBLOCKED` (a blocked `XREADGROUP` whose stream migrated away): the map is refreshed and the read sent again
///   to the slot's owner, once; the read had not returned any entry, so nothing is lost.
/// - `connectionFailed`, `unknownOutcome`, `TRYAGAIN`, `CLUSTERDOWN`: thrown to the caller (whose read loop backs
///   off and reads again), after forgetting the connection (not after `TRYAGAIN`) and refreshing the map, so the
///   next call follows a failover.
package final class ClusterReader: RedisDedicatedConnection {
    private struct State {
        var node: RedisConfiguration.Endpoint?
        var connection: RedisConnection?
        var closed = false
    }

    package let key: String
    package let slot: Int
    let client: RedisClusterClient
    let clientName: String
    private let state = Mutex(State())
    private let logger: Logger

    init(client: RedisClusterClient, key: String, clientName: String, logger: Logger) {
        self.client = client
        self.key = key
        self.slot = ClusterKeySlot.slot(key)
        self.clientName = clientName
        self.logger = logger
    }

    package var commandTimeout: Duration { client.commandTimeout }

    /// The node the reader is connected to now (nil before the first call and after a failure).
    package var node: RedisConfiguration.Endpoint? { state.withLock { $0.node } }

    package func send(_ command: RedisCommand, timeout: Duration?) async throws -> RedisReply {
        var request = ClusterRequest(command, route: .slot(slot), retries: .byCaller, deadline: .now)
        while true {
            switch request.next {
            case .route: break
            case .node(let node):
                request.next = .route
                retarget(node)
            case .asking(let node):
                // The importing node: the client sends `ASKING` and this one command on a connection of its own.
                return try await client.execute(command, route: .slot(slot), timeout: timeout, start: .asking(node))
            }
            let (node, connection) = try await target()
            do {
                return try await connection.send(command, timeout: timeout)
            } catch let error as RedisError {
                let decision = client.failed(error, on: node, request: &request)
                if decision.dropConnection { forget() }
                await client.perform(decision.refresh)
                guard decision.next == .send else { throw error }
            }
        }
    }

    /// Sent through the cluster client (its shared node connections): a reader sends single commands.
    package func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        try await client.pipeline(commands)
    }

    package func close() {
        let connection = state.withLock { state in
            state.closed = true
            defer { state.connection = nil }
            return state.connection
        }
        connection?.close()
    }

    /// The connection to the slot's primary, opened (lazily, by its first command) when there is none.
    private func target() async throws -> (RedisConfiguration.Endpoint, RedisConnection) {
        if let current = try state.withLock({ state -> (RedisConfiguration.Endpoint, RedisConnection)? in
            if state.closed { throw RedisError.closed }
            guard let node = state.node, let connection = state.connection else { return nil }
            return (node, connection)
        }) {
            return current
        }
        let primary = try await client.primary(for: .slot(slot))
        retarget(primary)
        return try state.withLock { state in
            if state.closed { throw RedisError.closed }
            guard let node = state.node, let connection = state.connection else { throw RedisError.closed }
            return (node, connection)
        }
    }

    /// Points the reader at `node`, closing the connection to another node.
    private func retarget(_ node: RedisConfiguration.Endpoint) {
        let old: RedisConnection? = state.withLock { state in
            if state.closed { return nil }
            if state.node == node && state.connection != nil { return nil }
            var configuration = client.configuration.node(node)
            configuration.clientName = clientName
            let previous = state.connection
            state.node = node
            state.connection = RedisConnection(configuration: configuration, logger: logger)
            return previous
        }
        if let old {
            logger.debug("cluster reader re-targeted", metadata: ["redis.node": "\(node)", "redis.slot": "\(slot)"])
            old.close()
        }
    }

    /// Drops the connection; the next call connects to the slot's primary by the (refreshed) map.
    private func forget() {
        let old = state.withLock { state in
            defer {
                state.connection = nil
                state.node = nil
            }
            return state.connection
        }
        old?.close()
    }
}
