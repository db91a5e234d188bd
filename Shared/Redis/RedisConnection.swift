import Foundation
import Logging

/// One hiredis `redisContext` owned by one dedicated OS thread; async callers are bridged with continuations.
///
/// Commands run in submission order. Blocking hiredis calls happen only on the connection's own thread, never
/// on the cooperative pool or an event loop. The context is created lazily (or by ``connect()``), dropped on
/// any I/O error or timeout (the command then fails with ``RedisError/unknownOutcome(_:)``), and recreated by
/// the next command after a capped, jittered backoff; `redisSetTimeout`, TCP keepalive, AUTH, SELECT and
/// CLIENT SETNAME are applied after every connect and reconnect.
package final class RedisConnection: RedisCommandExecutor {
    package let configuration: RedisConfiguration
    private let mailbox = ConnectionMailbox()

    package init(configuration: RedisConfiguration, logger: Logger) {
        self.configuration = configuration
        let thread = Thread { [mailbox] in
            // The session lives and dies on this thread only.
            let session = HiredisSession(configuration: configuration, logger: logger, mailbox: mailbox)
            while let job = mailbox.next() {
                Self.run(job, on: session, mailbox: mailbox, configuration: configuration)
            }
            session.disconnect()
        }
        thread.name = "redis \(configuration.host):\(configuration.port)"
        thread.start()
    }

    deinit { mailbox.close() }

    package var commandTimeout: Duration { configuration.commandTimeout }

    /// Connects now and checks the server answers PING, to fail fast at startup: throws
    /// ``RedisError/connectionFailed(_:)`` (also when PING times out), or
    /// ``RedisError/server(code:message:)`` if AUTH, SELECT or CLIENT SETNAME is refused.
    package func connect() async throws {
        _ = try await submit(.connect)
    }

    package func send(_ command: RedisCommand, timeout: Duration?) async throws -> RedisReply {
        let replies = try await submit(.command(command, timeout: timeout))
        guard let reply = replies.first else { throw RedisError.protocolError("no reply") }
        return reply
    }

    package func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        if commands.isEmpty { return [] }
        return try await submit(.pipeline(commands))
    }

    /// Stops the thread. A command in flight is interrupted (it fails with ``RedisError/unknownOutcome(_:)``,
    /// so a blocking read does not hold shutdown up); queued and later calls throw ``RedisError/closed``.
    package func close() {
        mailbox.close()
    }

    /// Queues work for the thread. Cancelling the caller removes queued work (throwing `CancellationError`)
    /// and interrupts a running blocking command (one with a per-call timeout), which then throws
    /// ``RedisError/unknownOutcome(_:)``; other running commands finish.
    private func submit(_ work: ConnectionMailbox.Job.Work) async throws -> [RedisReply] {
        let id = mailbox.makeJobID()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                mailbox.submit(.init(id: id, work: work, continuation: continuation))
            }
        } onCancel: { [mailbox] in
            mailbox.cancel(id: id)
        }
    }

    /// Runs on the connection thread.
    private static func run(
        _ job: ConnectionMailbox.Job, on session: HiredisSession, mailbox: ConnectionMailbox,
        configuration: RedisConfiguration
    ) {
        let sleep = { (delay: Duration) in mailbox.sleep(for: delay) }
        if let error = session.ensureConnected(sleep: sleep) {
            mailbox.finishRunning()
            // Nothing was sent. A refused AUTH, SELECT or SETNAME stays a server error only for connect().
            switch (error, job.work) {
            case (.server(_, let message), .command), (.server(_, let message), .pipeline):
                job.continuation.resume(throwing: RedisError.connectionFailed("connection setup refused: \(message)"))
            default:
                job.continuation.resume(throwing: error)
            }
            return
        }
        let result: Result<[RedisReply], RedisError> =
            switch job.work {
            case .connect:
                session.execute(RedisCommand("PING"), timeout: nil).map { [$0] }.mapError { error in
                    guard case .unknownOutcome(let message) = error else { return error }
                    return .connectionFailed("\(configuration.host):\(configuration.port) did not answer PING: \(message)")
                }
            case .command(let command, let timeout): session.execute(command, timeout: timeout).map { [$0] }
            case .pipeline(let commands): session.executePipeline(commands)
            }
        mailbox.finishRunning()
        job.continuation.resume(with: result.mapError { $0 as any Error })
    }
}
