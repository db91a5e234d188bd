package import Logging
import ServiceLifecycle
import Synchronization

/// A few multiplexed ``RedisConnection``s shared by any number of callers.
///
/// Ordinary commands go to any connection, round robin, and are pipelined there with everyone else's. A call
/// that holds a connection (a blocking read, see ``ConnectionJob/holdsConnection``) and ``withConnection(_:)``
/// take one connection to themselves until they finish, so nothing queues behind a blocked connection; when
/// every connection is held, callers wait in arrival order, at most `maxWaiters` of them (more throw
/// ``RedisError/connectionFailed(_:)`` "pool exhausted"). As a `ServiceLifecycle.Service`, `run()` waits for
/// graceful shutdown, then closes every connection.
package final class RedisPool: RedisCommandExecutor, Service {
    private enum Waiter {
        case job(ConnectionJob, holds: Bool)
        case lease(id: UInt64, continuation: CheckedContinuation<Int, any Error>)

        var id: UInt64 {
            switch self {
            case .job(let job, _): job.id
            case .lease(let id, _): id
            }
        }
    }

    private struct State {
        /// Per connection: leased, or running a call that holds it.
        var held: [Bool]
        /// The connection each holding call or lease has.
        var holders: [UInt64: Int] = [:]
        var waiters: [Waiter] = []
        var next = 0
        var closed = false

        /// The next connection not held, round robin.
        mutating func available() -> Int? {
            for offset in 0..<held.count {
                let index = (next + offset) % held.count
                if !held[index] {
                    next = index + 1
                    return index
                }
            }
            return nil
        }
    }

    package let configuration: RedisConfiguration
    package let size: Int
    private let maxWaiters: Int
    private let connections: [RedisConnection]
    private let state: Mutex<State>
    let logger: Logger

    package init(configuration: RedisConfiguration, size: Int, maxWaiters: Int = 10_000, logger: Logger) {
        self.configuration = configuration
        self.size = max(size, 1)
        self.maxWaiters = max(maxWaiters, 0)
        self.logger = logger
        connections = (0..<self.size).map { _ in RedisConnection(configuration: configuration, logger: logger) }
        state = Mutex(State(held: Array(repeating: false, count: self.size)))
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
        guard !command.arguments.isEmpty else { throw RedisError.protocolError("empty command") }
        let replies = try await run(.command(command, timeout: timeout))
        guard let reply = replies.first else { throw RedisError.protocolError("no reply") }
        return reply
    }

    package func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        if commands.isEmpty { return [] }
        if commands.contains(where: \.arguments.isEmpty) { throw RedisError.protocolError("empty command") }
        return try await run(.pipeline(commands))
    }

    /// Takes one connection for `body` alone (e.g. for a long blocking read); others are not sent there meanwhile.
    package func withConnection<Value: Sendable>(
        _ body: (RedisConnection) async throws -> Value
    ) async throws -> Value {
        let id = ConnectionJob.makeID()
        let index = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
                let outcome: Result<Int, any Error>? = state.withLock { state in
                    if let refusal = refusal(&state) { return .failure(refusal) }
                    if let index = state.available() {
                        state.held[index] = true
                        state.holders[id] = index
                        return .success(index)
                    }
                    state.waiters.append(.lease(id: id, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            cancel(id: id)
        }
        defer { release(id) }
        return try await body(connections[index])
    }

    /// Refuses new calls, fails waiting callers with ``RedisError/closed`` and closes every connection.
    package func close() {
        let waiters = state.withLock { state in
            state.closed = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters {
            switch waiter {
            case .job(let job, _): job.continuation.resume(throwing: RedisError.closed)
            case .lease(_, let continuation): continuation.resume(throwing: RedisError.closed)
            }
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

    /// Sends `work` on a connection not held (taking it when `holds`), or queues the caller until one is free.
    private func run(_ work: ConnectionJob.Work) async throws -> [RedisReply] {
        let id = ConnectionJob.makeID()
        defer { release(id) }  // a no-op unless the job held a connection
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let job = ConnectionJob(id: id, work: work, continuation: continuation)
                let holds = job.holdsConnection
                let refused: (any Error)? = state.withLock { state in
                    if let refusal = refusal(&state) { return refusal }
                    if let index = state.available() {
                        dispatch(job, holds: holds, to: index, in: &state)
                    } else {
                        state.waiters.append(.job(job, holds: holds))
                    }
                    return nil
                }
                if let refused { continuation.resume(throwing: refused) }
            }
        } onCancel: {
            cancel(id: id)
        }
    }

    /// Why a new caller cannot be taken (checked under the lock), or nil.
    private func refusal(_ state: inout State) -> (any Error)? {
        if state.closed { return RedisError.closed }
        if Task.isCancelled { return CancellationError() }
        if state.waiters.count >= maxWaiters, !state.held.contains(false) {
            return RedisError.connectionFailed("pool exhausted (\(maxWaiters) callers waiting)")
        }
        return nil
    }

    private func dispatch(_ job: ConnectionJob, holds: Bool, to index: Int, in state: inout State) {
        if holds {
            state.held[index] = true
            state.holders[job.id] = index
        }
        connections[index].enqueue(job)
    }

    /// A holding call or lease ended: its connection is free, and waiting callers are served in arrival order.
    private func release(_ id: UInt64) {
        let leases: [(CheckedContinuation<Int, any Error>, Int)] = state.withLock { state in
            guard let index = state.holders.removeValue(forKey: id) else { return [] }
            state.held[index] = false
            var leases: [(CheckedContinuation<Int, any Error>, Int)] = []
            while !state.waiters.isEmpty, let index = state.available() {
                switch state.waiters.removeFirst() {
                case .job(let job, let holds):
                    dispatch(job, holds: holds, to: index, in: &state)
                case .lease(let leaseID, let continuation):
                    state.held[index] = true
                    state.holders[leaseID] = index
                    leases.append((continuation, index))
                }
            }
            return leases
        }
        for (continuation, index) in leases { continuation.resume(returning: index) }
    }

    /// A caller was cancelled: removed if still waiting here, otherwise passed on to the connections.
    private func cancel(id: UInt64) {
        let waiter: Waiter? = state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        switch waiter {
        case .job(let job, _): job.continuation.resume(throwing: CancellationError())
        case .lease(_, let continuation): continuation.resume(throwing: CancellationError())
        case nil:
            for connection in connections { connection.cancel(id: id) }
        }
    }
}
