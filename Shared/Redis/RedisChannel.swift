import CHiredis
import Logging
import Synchronization

/// One Redis connection as a state machine run by a ``RedisEventLoop``: callers' jobs queue in `pending`, are
/// written together whenever the loop turns, and wait in `inFlight` for their replies, which arrive in order.
///
/// The contracts of the dedicated-thread client it replaced hold: a command that got no reply within its
/// timeout drops the connection and fails, with every other command in flight, as
/// ``RedisError/unknownOutcome(_:)``; nothing is sent before AUTH, SELECT and CLIENT SETNAME succeeded on a new
/// connection; a failed connect fails the queued jobs as ``RedisError/connectionFailed(_:)`` (never sent) and
/// the next attempt waits a capped, jittered backoff; a job that holds the connection (a blocking read) is
/// sent last, and nothing follows it until its reply is in.
///
/// `@unchecked Sendable` is safe: `isClosed` is guarded by the loop's inbox lock, everything else is read and
/// written on the loop's thread only.
final class RedisChannel: @unchecked Sendable {
    enum State {
        case idle
        case waiting(until: ContinuousClock.Instant)
        case connecting(deadline: ContinuousClock.Instant, addresses: [SocketAddress])
        case handshaking
        case ready
        case shut
    }

    /// A job (or the handshake, when `job` is nil) whose replies are awaited.
    struct InFlight {
        var job: ConnectionJob?
        var replies: [RedisReply] = []
        let expected: Int
        let deadline: ContinuousClock.Instant?
        var names: String = ""
    }

    private static let lastID = Mutex<UInt64>(0)

    let id: UInt64
    let configuration: RedisConfiguration
    let logger: Logger
    let endpoint: String
    /// Guarded by the loop's inbox lock (``RedisEventLoop``).
    var isClosed = false

    // Loop thread only.
    var state: State = .idle
    var socket: Int32 = -1
    var reader: UnsafeMutablePointer<redisReader>?
    var output: [UInt8] = []
    var written = 0
    var pending = FIFO<ConnectionJob>()
    var inFlight = FIFO<InFlight>()
    /// A job that holds the connection is in flight: nothing more is written until its reply arrives.
    var holding = false
    var backoff = ReconnectBackoff()
    var interest: UInt32 = 0

    init(configuration: RedisConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        endpoint =
            configuration.host.contains(":")
            ? "[\(configuration.host)]:\(configuration.port)" : "\(configuration.host):\(configuration.port)"
        id = Self.lastID.withLock { last in
            last += 1
            return last
        }
    }

    /// When the loop must call ``deadlinePassed(now:)``: the backoff's end, the connect deadline, or the earliest
    /// reply deadline. Jobs with the configured timeout are written in order, so their deadlines rise; a job with
    /// a timeout of its own holds the connection and so is last: the first and the last entry cover all.
    var deadline: ContinuousClock.Instant? {
        switch state {
        case .waiting(let until): return until
        case .connecting(let deadline, _): return deadline
        case .handshaking, .ready:
            switch (inFlight.first?.deadline, inFlight.last?.deadline) {
            case (let first?, let last?): return min(first, last)
            case (let first?, nil): return first
            case (nil, let last?): return last
            case (nil, nil): return nil
            }
        case .idle, .shut: return nil
        }
    }

    func enqueue(_ job: ConnectionJob) {
        if case .shut = state {
            job.continuation.resume(throwing: RedisError.closed)
            return
        }
        pending.append(job)
    }

    /// Starts a connection when work waits and none exists; writes what waits when connected.
    func flush() {
        if case .idle = state, !pending.isEmpty { beginConnect() }
        guard case .ready = state else { return }
        if !holding, !pending.isEmpty {
            let now = ContinuousClock.now
            while !holding, let job = pending.popFirst() {
                let commands = job.commands
                for command in commands { RESPEncoder.append(command, to: &output) }
                let timeout = job.timeout ?? configuration.commandTimeout
                inFlight.append(InFlight(job: job, expected: commands.count, deadline: timeout == .zero ? nil : now + timeout))
                if job.holdsConnection { holding = true }
            }
        }
        if written < output.count { writeOutput() }
    }

    func deadlinePassed(now: ContinuousClock.Instant) {
        switch state {
        case .waiting: connectNow()
        case .connecting: connectFailed(.connectionFailed("\(endpoint): Connection timed out"))
        case .handshaking, .ready: drop("timed out")
        case .idle, .shut: break
        }
    }

    /// The caller of job `id` was cancelled: an unsent job fails with `CancellationError`; an interruptible one
    /// in flight drops the connection (its outcome, and that of anything sent with it, is unknown).
    func cancel(id: UInt64) {
        if let job = pending.remove(where: { $0.id == id }) {
            job.continuation.resume(throwing: CancellationError())
        } else if inFlight.contains(where: { $0.job?.id == id && $0.job?.isInterruptible == true }) {
            drop("interrupted by its caller's cancellation")
        }
    }

    /// Closes for good: unsent jobs fail with `.closed`, jobs in flight with an unknown outcome.
    func shutDown() {
        let inFlightJobs = inFlight.removeAll()
        closeSocket()
        state = .shut
        for entry in inFlightJobs {
            entry.job?.continuation.resume(throwing: RedisError.unknownOutcome(Self.describe(entry, "connection closed")))
        }
        for job in pending.removeAll() { job.continuation.resume(throwing: RedisError.closed) }
    }

    /// One reply, for the oldest job in flight.
    func deliver(_ reply: RedisReply) {
        guard !inFlight.isEmpty else { return drop("a reply nothing asked for") }
        let complete = inFlight.withFirst { entry in
            entry.replies.append(reply)
            return entry.replies.count == entry.expected
        }
        guard complete, let entry = inFlight.popFirst() else { return }
        guard let job = entry.job else { return handshakeAnswered(entry.replies) }
        if job.holdsConnection { holding = false }
        switch job.work {
        case .pipeline:
            job.continuation.resume(returning: entry.replies)
        case .connect, .command:
            if case .error(let text) = reply {
                job.continuation.resume(throwing: RedisError.fromErrorReply(text))
            } else {
                job.continuation.resume(returning: [reply])
            }
        }
    }

    /// The connection broke (I/O error, end of stream, a timeout, an interruption): jobs in flight fail with an
    /// unknown outcome; unsent jobs stay queued for the next connection.
    func drop(_ reason: String) {
        if case .handshaking = state {
            let names = inFlight.first?.names ?? "handshake"
            return connectFailed(.connectionFailed("\(endpoint): \(names) failed: \(reason)"))
        }
        let failed = inFlight.removeAll()
        closeSocket()
        state = .idle
        logger.warning(
            "redis connection lost",
            metadata: [
                "redis.endpoint": "\(endpoint)",
                "redis.command": "\(failed.first.map { Self.describe($0, "") } ?? "none")",
                "redis.in_flight": "\(failed.count)", "error": "\(reason)",
            ])
        for entry in failed {
            guard let job = entry.job else { continue }
            let error = RedisError.unknownOutcome(Self.describe(entry, reason))
            if case .connect = job.work {
                job.continuation.resume(throwing: RedisError.connectionFailed("\(endpoint) did not answer PING: \(error.message)"))
            } else {
                job.continuation.resume(throwing: error)
            }
        }
    }

    /// A connect or handshake failed: every queued job fails (none was sent) and the next attempt backs off.
    func connectFailed(_ error: RedisError) {
        _ = inFlight.removeAll()
        closeSocket()
        state = .idle
        backoff.recordFailure()
        logger.log(
            level: backoff.consecutiveFailures == 1 ? .warning : .debug, "redis connect failed",
            metadata: [
                "redis.endpoint": "\(endpoint)", "error": "\(error)", "redis.failures": "\(backoff.consecutiveFailures)",
            ])
        for job in pending.removeAll() {
            switch (error, job.work) {
            case (.server(_, let message), .command), (.server(_, let message), .pipeline):
                // A refused AUTH, SELECT or SETNAME stays a server error only for connect().
                job.continuation.resume(throwing: RedisError.connectionFailed("connection setup refused: \(message)"))
            default:
                job.continuation.resume(throwing: error)
            }
        }
    }

    private func handshakeAnswered(_ replies: [RedisReply]) {
        for reply in replies {
            if case .error(let text) = reply { return connectFailed(RedisError.fromErrorReply(text)) }
        }
        becomeReady()
    }

    func becomeReady() {
        state = .ready
        if backoff.consecutiveFailures > 0 {
            logger.info("redis reconnected", metadata: ["redis.endpoint": "\(endpoint)"])
        }
        backoff.recordSuccess()
    }

    /// AUTH, SELECT and CLIENT SETNAME, as configured.
    var handshake: [RedisCommand] {
        var commands: [RedisCommand] = []
        if let password = configuration.password {
            if let username = configuration.username {
                commands.append(RedisCommand("AUTH", username, password))
            } else {
                commands.append(RedisCommand("AUTH", password))
            }
        }
        if configuration.database != 0 { commands.append(RedisCommand("SELECT", configuration.database)) }
        if let name = configuration.clientName { commands.append(RedisCommand("CLIENT", "SETNAME", name)) }
        return commands
    }

    /// What failed, for an error message: the command's name, or which reply of a pipeline.
    static func describe(_ entry: InFlight, _ reason: String) -> String {
        let what: String =
            switch entry.job?.work {
            case .pipeline(let commands): "pipeline reply \(entry.replies.count + 1) of \(commands.count)"
            case .command(let command, _): command.name
            case .connect: "PING"
            case nil: entry.names
            }
        return reason.isEmpty ? what : "\(what): \(reason)"
    }
}
