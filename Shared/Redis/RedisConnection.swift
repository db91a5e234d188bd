package import Logging

/// One multiplexed Redis connection: any number of tasks send through it at once, and every command queued
/// while the connection's event loop is busy goes out with the others in one write (auto-pipelining, as
/// ioredis and redis-rs' multiplexed connection do); replies complete the callers in order.
///
/// The connection is driven by a ``RedisEventLoop`` (one of `TOLLGATE_REDIS_IO_THREADS` dedicated threads
/// shared by every connection of the process); hiredis' reply reader runs on that thread only, never on the
/// cooperative pool. It connects lazily (or by ``connect()``); any I/O error or timeout drops it (the commands
/// in flight then fail with ``RedisError/unknownOutcome(_:)``) and the next command reconnects, after a capped,
/// jittered backoff when connecting failed. TCP keepalive, AUTH, SELECT and CLIENT SETNAME are applied after
/// every connect and reconnect, before anything else is sent. A blocking call (one given its own timeout, or a
/// command declared blocking, see ``RedisCommand/isBlocking``) is sent after what is already queued, and
/// nothing follows it until it is answered: give blocking reads a connection of their own.
package final class RedisConnection: RedisCommandExecutor {
    package let configuration: RedisConfiguration
    let channel: RedisChannel
    private let loop: RedisEventLoop

    package init(configuration: RedisConfiguration, logger: Logger) {
        self.configuration = configuration
        channel = RedisChannel(configuration: configuration, logger: logger)
        loop = RedisEventLoop.next()
    }

    deinit { loop.close(channel) }

    package var commandTimeout: Duration { configuration.commandTimeout }

    /// Connects now and checks the server answers PING, to fail fast at startup: throws
    /// ``RedisError/connectionFailed(_:)`` (also when PING times out), or
    /// ``RedisError/server(code:message:)`` if AUTH, SELECT or CLIENT SETNAME is refused.
    package func connect() async throws {
        _ = try await submit(.connect, id: ConnectionJob.makeID())
    }

    package func send(_ command: RedisCommand, timeout: Duration?) async throws -> RedisReply {
        guard !command.arguments.isEmpty else { throw RedisError.protocolError("empty command") }
        let replies = try await submit(.command(command, timeout: timeout), id: ConnectionJob.makeID())
        guard let reply = replies.first else { throw RedisError.protocolError("no reply") }
        return reply
    }

    package func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        if commands.isEmpty { return [] }
        if commands.contains(where: \.arguments.isEmpty) { throw RedisError.protocolError("empty command") }
        return try await submit(.pipeline(commands), id: ConnectionJob.makeID())
    }

    /// Closes the connection. Commands in flight fail with ``RedisError/unknownOutcome(_:)`` (so a blocking read
    /// does not hold shutdown up); queued and later calls throw ``RedisError/closed``.
    package func close() {
        loop.close(channel)
    }

    /// Queues work for the loop. Cancelling the caller removes unsent work (throwing `CancellationError`) and
    /// interrupts a blocking call in flight (one with a per-call timeout), which then throws
    /// ``RedisError/unknownOutcome(_:)``; other commands already sent finish.
    func submit(_ work: ConnectionJob.Work, id: UInt64) async throws -> [RedisReply] {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                loop.submit(ConnectionJob(id: id, work: work, continuation: continuation), to: channel)
            }
        } onCancel: { [loop, channel] in
            loop.cancel(id: id, on: channel)
        }
    }

    /// Hands an already built job to the loop (a pool dispatching a waiting caller in arrival order).
    func enqueue(_ job: ConnectionJob) {
        loop.submit(job, to: channel, checkingCancellation: false)
    }

    func cancel(id: UInt64) {
        loop.cancel(id: id, on: channel)
    }
}
