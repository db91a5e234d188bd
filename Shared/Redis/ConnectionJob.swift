import Synchronization

/// One caller's unit of work for a connection, with the continuation its result goes to (resumed exactly once).
struct ConnectionJob: Sendable {
    enum Work: Sendable {
        /// PING, to prove the server answers (``RedisConnection/connect()``).
        case connect
        case command(RedisCommand, timeout: Duration?)
        case pipeline([RedisCommand])
    }

    let id: UInt64
    let work: Work
    let continuation: CheckedContinuation<[RedisReply], any Error>
    /// Whether nothing may be sent after this job until its replies are in: a call with its own timeout (a
    /// blocking read) or a command declared blocking (``RedisCommand/isBlocking``). Worked out once, here.
    let holdsConnection: Bool

    init(id: UInt64, work: Work, continuation: CheckedContinuation<[RedisReply], any Error>) {
        self.id = id
        self.work = work
        self.continuation = continuation
        holdsConnection =
            switch work {
            case .connect: false
            case .command(let command, let timeout): timeout != nil || command.isBlocking
            case .pipeline(let commands): commands.contains(where: \.isBlocking)
            }
    }

    var commands: [RedisCommand] {
        switch work {
        case .connect: [RedisCommand("PING")]
        case .command(let command, _): [command]
        case .pipeline(let commands): commands
        }
    }

    /// Only blocking calls (those given a per-call timeout) are interrupted when their caller is cancelled;
    /// ordinary commands are short and finish.
    var isInterruptible: Bool {
        if case .command(_, let timeout) = work { return timeout != nil }
        return false
    }

    /// The per-call timeout, or nil for the configured command timeout.
    var timeout: Duration? {
        if case .command(_, let timeout) = work { return timeout }
        return nil
    }

    private static let lastID = Mutex<UInt64>(0)

    /// A process-wide unique id, so a pool and its connections can name the same job.
    static func makeID() -> UInt64 {
        lastID.withLock { last in
            last &+= 1
            return last
        }
    }
}
