import CHiredis
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One hiredis `redisContext` and its reconnect state.
///
/// Deliberately not `Sendable`: a session is created, used and freed on its connection's dedicated thread
/// only, so the context pointer is never touched concurrently.
final class HiredisSession {
    private let configuration: RedisConfiguration
    private let logger: Logger
    private var context: UnsafeMutablePointer<redisContext>?
    private var backoff = ReconnectBackoff()
    private let mailbox: ConnectionMailbox

    init(configuration: RedisConfiguration, logger: Logger, mailbox: ConnectionMailbox) {
        self.configuration = configuration
        self.logger = logger
        self.mailbox = mailbox
    }

    deinit { disconnect() }

    func disconnect() {
        guard let context else { return }
        mailbox.detachSocket()
        redisFree(context)
        self.context = nil
    }

    /// Connects (after the backoff delay, if the last attempts failed) unless already connected.
    ///
    /// `sleep` waits on the owning thread and returns false if the connection was closed meanwhile.
    func ensureConnected(sleep: (Duration) -> Bool) -> RedisError? {
        if context != nil { return nil }
        let delay = backoff.delay()
        if delay > .zero, !sleep(delay) { return .closed }
        let endpoint = "\(configuration.host):\(configuration.port)"
        guard
            let fresh = redisConnectWithTimeout(
                configuration.host, Int32(configuration.port),
                makeTimeval(configuration.connectTimeout))
        else {
            return connectFailed(.connectionFailed("\(endpoint): cannot allocate a hiredis context"))
        }
        if fresh.pointee.err != 0 {
            let message = Self.errorText(fresh)
            redisFree(fresh)
            return connectFailed(.connectionFailed("\(endpoint): \(message)"))
        }
        guard redisSetTimeout(fresh, makeTimeval(configuration.commandTimeout)) == REDIS_OK,
            redisEnableKeepAlive(fresh) == REDIS_OK
        else {
            let message = Self.errorText(fresh)
            redisFree(fresh)
            return connectFailed(.connectionFailed("\(endpoint): socket options: \(message)"))
        }
        context = fresh
        mailbox.attach(socket: fresh.pointee.fd)
        for command in handshake() {
            if case .failure(let error) = execute(command, timeout: nil) {
                disconnect()
                if case .unknownOutcome(let message) = error {
                    return connectFailed(.connectionFailed("\(endpoint): \(command.name) failed: \(message)"))
                }
                return connectFailed(error)
            }
        }
        if backoff.consecutiveFailures > 0 {
            logger.info("redis reconnected", metadata: ["redis.endpoint": "\(endpoint)"])
        }
        backoff.recordSuccess()
        return nil
    }

    /// AUTH, SELECT and CLIENT SETNAME, as configured.
    private func handshake() -> [RedisCommand] {
        var commands: [RedisCommand] = []
        if let password = configuration.password {
            if let username = configuration.username {
                commands.append(RedisCommand("AUTH", username, password))
            } else {
                commands.append(RedisCommand("AUTH", password))
            }
        }
        if configuration.database != 0 {
            commands.append(RedisCommand("SELECT", configuration.database))
        }
        if let name = configuration.clientName {
            commands.append(RedisCommand("CLIENT", "SETNAME", name))
        }
        return commands
    }

    private func connectFailed(_ error: RedisError) -> RedisError {
        backoff.recordFailure()
        let level: Logger.Level = backoff.consecutiveFailures == 1 ? .warning : .debug
        logger.log(
            level: level, "redis connect failed",
            metadata: [
                "redis.endpoint": "\(configuration.host):\(configuration.port)",
                "error": "\(error)",
                "redis.failures": "\(backoff.consecutiveFailures)",
            ])
        return error
    }

    /// Sends one command and reads its reply on the current context (which must exist).
    /// An error reply becomes `.server`; an I/O failure drops the context and becomes `.unknownOutcome`.
    func execute(_ command: RedisCommand, timeout: Duration?) -> Result<RedisReply, RedisError> {
        guard let context else { return .failure(.connectionFailed("not connected")) }
        guard !command.arguments.isEmpty else { return .failure(.protocolError("empty command")) }
        let override = timeout.flatMap { $0 == configuration.commandTimeout ? nil : $0 }
        if let override { redisSetTimeout(context, makeTimeval(override)) }
        let raw = command.arguments.withArgv { argc, argv, lengths in
            redisCommandArgv(context, argc, argv, lengths)
        }
        guard let raw else { return .failure(dropContext(command.name)) }
        defer { freeReplyObject(raw) }
        if override != nil, redisSetTimeout(context, makeTimeval(configuration.commandTimeout)) != REDIS_OK {
            disconnect()
        }
        let reply = RedisReply(hiredis: raw.assumingMemoryBound(to: redisReply.self))
        if case .error(let text) = reply { return .failure(RedisError.fromErrorReply(text)) }
        return .success(reply)
    }

    /// Appends every command, then reads one reply each. Error replies stay in place as `.error`.
    func executePipeline(_ commands: [RedisCommand]) -> Result<[RedisReply], RedisError> {
        guard let context else { return .failure(.connectionFailed("not connected")) }
        if commands.contains(where: \.arguments.isEmpty) { return .failure(.protocolError("empty command")) }
        for command in commands {
            let status = command.arguments.withArgv { argc, argv, lengths in
                redisAppendCommandArgv(context, argc, argv, lengths)
            }
            if status != REDIS_OK {
                // Appending only fills hiredis' output buffer; nothing has been written yet.
                let message = Self.errorText(context)
                disconnect()
                return .failure(.connectionFailed("buffering pipeline: \(message)"))
            }
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for index in commands.indices {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReply(context, &raw) == REDIS_OK, let raw else {
                return .failure(dropContext("pipeline reply \(index + 1) of \(commands.count)"))
            }
            replies.append(RedisReply(hiredis: raw.assumingMemoryBound(to: redisReply.self)))
            freeReplyObject(raw)
        }
        return .success(replies)
    }

    /// Frees the broken context so the next command reconnects; the in-flight outcome is unknown.
    private func dropContext(_ what: String) -> RedisError {
        let message = context.map(Self.errorText) ?? "no context"
        disconnect()
        logger.warning(
            "redis connection lost",
            metadata: [
                "redis.endpoint": "\(configuration.host):\(configuration.port)",
                "redis.command": "\(what)",
                "error": "\(message)",
            ])
        return .unknownOutcome("\(what): \(message)")
    }

    private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
        let text = withUnsafeBytes(of: context.pointee.errstr) { buffer in
            String(decoding: buffer.prefix(while: { $0 != 0 }), as: UTF8.self)
        }
        return text.isEmpty ? "error \(context.pointee.err)" : text
    }
}

/// A POSIX `timeval` for a duration; zero means "no timeout" to the socket layer.
private func makeTimeval(_ duration: Duration) -> timeval {
    let micros = max(duration.microseconds, 0)
    return timeval(tv_sec: .init(micros / 1_000_000), tv_usec: .init(micros % 1_000_000))
}
