import Logging
import ServiceLifecycle

/// A bounded pool of ``RedisConnection``s (one dedicated thread each).
///
/// A call leases one connection for its duration; callers beyond `size` wait in FIFO order, at most
/// `maxWaiters` of them (more throw ``RedisError/connectionFailed(_:)`` "pool exhausted"). As a
/// `ServiceLifecycle.Service`, `run()` waits for graceful shutdown, then closes every connection.
package final class RedisPool: RedisCommandExecutor, Service {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<RedisConnection, any Error>
    }

    private struct State {
        var idle: [RedisConnection]
        var waiters: [Waiter] = []
        var nextWaiterID: UInt64 = 0
        var closed = false
    }

    package let configuration: RedisConfiguration
    package let size: Int
    private let maxWaiters: Int
    private let connections: [RedisConnection]
    private let state: LockedState<State>
    private let logger: Logger

    package init(configuration: RedisConfiguration, size: Int, maxWaiters: Int = 10_000, logger: Logger) {
        self.configuration = configuration
        self.size = max(size, 1)
        self.maxWaiters = max(maxWaiters, 0)
        self.logger = logger
        connections = (0..<self.size).map { _ in RedisConnection(configuration: configuration, logger: logger) }
        state = LockedState(State(idle: connections))
    }

    package var commandTimeout: Duration { configuration.commandTimeout }

    /// Connects every connection now, to fail fast at startup (see ``RedisConnection/connect()``).
    package func connect() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for connection in connections {
                group.addTask { try await connection.connect() }
            }
            try await group.waitForAll()
        }
    }

    package func send(_ command: RedisCommand, timeout: Duration?) async throws -> RedisReply {
        try await withConnection { try await $0.send(command, timeout: timeout) }
    }

    package func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        if commands.isEmpty { return [] }
        return try await withConnection { try await $0.pipeline(commands) }
    }

    /// Leases one connection for `body` (e.g. for several commands in order, or a long blocking read).
    package func withConnection<Result: Sendable>(
        _ body: (RedisConnection) async throws -> Result
    ) async throws -> Result {
        let connection = try await acquire()
        defer { release(connection) }
        return try await body(connection)
    }

    /// Refuses new calls, fails waiting callers with ``RedisError/closed`` and closes every connection.
    package func close() {
        let waiters = state.withLock { state in
            state.closed = true
            state.idle.removeAll()
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters {
            waiter.continuation.resume(throwing: RedisError.closed)
        }
        for connection in connections {
            connection.close()
        }
    }

    package func run() async throws {
        try? await gracefulShutdown()
        logger.info("closing redis pool")
        close()
    }

    private func acquire() async throws -> RedisConnection {
        let id: UInt64 = try state.withLock { state in
            if state.closed { throw RedisError.closed }
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let outcome: Result<RedisConnection, any Error>? = state.withLock { state in
                    if state.closed { return .failure(RedisError.closed) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if let connection = state.idle.popLast() { return .success(connection) }
                    if state.waiters.count >= maxWaiters {
                        return .failure(RedisError.connectionFailed("pool exhausted (\(maxWaiters) callers waiting)"))
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    private func release(_ connection: RedisConnection) {
        let waiter = state.withLock { state -> Waiter? in
            if state.closed { return nil }
            if state.waiters.isEmpty {
                state.idle.append(connection)
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.continuation.resume(returning: connection)
    }
}
