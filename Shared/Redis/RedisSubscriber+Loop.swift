import CHiredis
import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The body of a ``RedisSubscriber``'s thread. Not `Sendable`: it is created, run and dropped on that
/// thread only, so its hiredis context is never touched concurrently.
struct SubscriberLoop {
    let configuration: RedisConfiguration
    let channels: [String]
    let logger: Logger
    let pingInterval: Duration
    let isClosed: () -> Bool
    let deliver: (RedisSubscriber.Event) -> Void
    private var backoff = ReconnectBackoff()
    /// Which of ``RedisConfiguration/seeds`` the next connection goes to: a lost or failed connection moves on to
    /// the next seed, so on a Redis Cluster (where `PUBLISH` reaches every node) the subscription survives the loss
    /// of any one node. With one seed it is always that server.
    private var seedIndex = 0

    init(
        configuration: RedisConfiguration, channels: [String], logger: Logger, pingInterval: Duration,
        isClosed: @escaping () -> Bool, deliver: @escaping (RedisSubscriber.Event) -> Void
    ) {
        self.configuration = configuration
        self.channels = channels
        self.logger = logger
        self.pingInterval = pingInterval
        self.isClosed = isClosed
        self.deliver = deliver
    }

    mutating func run() {
        while !isClosed() {
            if !sleep(backoff.delay()) { return }
            let seeds = configuration.seeds
            let seed = seeds[seedIndex % seeds.count]
            guard let context = subscribe(to: seed) else {
                seedIndex += 1
                backoff.recordFailure()
                if backoff.consecutiveFailures == 1 {
                    logger.warning("redis subscription lost", metadata: ["redis.channels": "\(channels.count)"])
                }
                continue
            }
            if backoff.consecutiveFailures > 0 { logger.info("redis subscription restored") }
            backoff.recordSuccess()
            deliver(.subscribed)
            receive(on: context)
            redisFree(context)
            seedIndex += 1
        }
    }

    /// Connects, runs the handshake and subscribes; nil (context freed) on any failure.
    private func subscribe(to seed: RedisConfiguration.Endpoint) -> UnsafeMutablePointer<redisContext>? {
        guard
            let context = redisConnectWithTimeout(
                seed.host, Int32(seed.port),
                timeval(configuration.connectTimeout))
        else { return nil }
        guard context.pointee.err == 0, redisSetTimeout(context, timeval(configuration.commandTimeout)) == REDIS_OK,
            redisEnableKeepAlive(context) == REDIS_OK
        else {
            redisFree(context)
            return nil
        }
        var handshake: [RedisCommand] = []
        if let password = configuration.password {
            handshake.append(configuration.username.map { RedisCommand("AUTH", $0, password) } ?? RedisCommand("AUTH", password))
        }
        if configuration.database != 0 { handshake.append(RedisCommand("SELECT", configuration.database)) }
        if let name = configuration.clientName { handshake.append(RedisCommand("CLIENT", "SETNAME", name + "-sub")) }
        for command in handshake {
            guard let reply = Self.call(context, command), !reply.isError else {
                redisFree(context)
                return nil
            }
        }
        let command = RedisCommand("SUBSCRIBE", arguments: channels)
        guard var reply = Self.call(context, command), !reply.isError else {
            redisFree(context)
            return nil
        }
        // One confirmation per channel; the first came back with the command.
        for _ in 1..<max(channels.count, 1) {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReply(context, &raw) == REDIS_OK, let raw else {
                redisFree(context)
                return nil
            }
            reply = RedisReply(hiredis: raw.assumingMemoryBound(to: redisReply.self))
            freeReplyObject(raw)
            if reply.isError {
                redisFree(context)
                return nil
            }
        }
        return context
    }

    /// Reads pushes until the connection fails or the subscriber is closed. Waits with `poll` in 100 ms
    /// steps, so closing needs no signal, and probes an idle connection with PING.
    private func receive(on context: UnsafeMutablePointer<redisContext>) {
        let clock = ContinuousClock()
        var lastData = clock.now
        var pingSent = false
        while !isClosed() {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReplyFromReader(context, &raw) == REDIS_OK else { return }
            if let raw {
                let reply = RedisReply(hiredis: raw.assumingMemoryBound(to: redisReply.self))
                freeReplyObject(raw)
                handle(reply)
                continue
            }
            var descriptor = pollfd(fd: context.pointee.fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, 100)
            if ready < 0 && errno != EINTR { return }
            if ready > 0 {
                guard redisBufferRead(context) == REDIS_OK else { return }
                lastData = clock.now
                pingSent = false
                continue
            }
            let idle = clock.now - lastData
            if pingSent, idle > pingInterval * 2 { return }
            if !pingSent, idle > pingInterval {
                guard Self.append(context, RedisCommand("PING")) else { return }
                pingSent = true
            }
        }
    }

    private func handle(_ reply: RedisReply) {
        guard let parts = reply.array, parts.count == 3, parts[0].string == "message",
            let channel = parts[1].string, let payload = parts[2].bytes
        else { return }
        deliver(.message(channel: channel, payload: payload))
    }

    /// Sleeps in 100 ms steps; false when closed meanwhile.
    private func sleep(_ delay: Duration) -> Bool {
        var remaining = delay
        while remaining > .zero {
            if isClosed() { return false }
            let step = min(remaining, .milliseconds(100))
            usleep(UInt32(step.microseconds))
            remaining -= step
        }
        return !isClosed()
    }

    private static func call(_ context: UnsafeMutablePointer<redisContext>, _ command: RedisCommand) -> RedisReply? {
        let raw = command.arguments.withArgv { argc, argv, lengths in redisCommandArgv(context, argc, argv, lengths) }
        guard let raw else { return nil }
        defer { freeReplyObject(raw) }
        return RedisReply(hiredis: raw.assumingMemoryBound(to: redisReply.self))
    }

    /// Appends a command and writes the output buffer out (blocking up to the command timeout).
    private static func append(_ context: UnsafeMutablePointer<redisContext>, _ command: RedisCommand) -> Bool {
        let status = command.arguments.withArgv { argc, argv, lengths in
            redisAppendCommandArgv(context, argc, argv, lengths)
        }
        guard status == REDIS_OK else { return false }
        var done: Int32 = 0
        while done == 0 {
            guard redisBufferWrite(context, &done) == REDIS_OK else { return false }
        }
        return true
    }

    private func timeval(_ duration: Duration) -> Glibc.timeval {
        let micros = max(duration.microseconds, 0)
        return Glibc.timeval(tv_sec: .init(micros / 1_000_000), tv_usec: .init(micros % 1_000_000))
    }
}

extension RedisReply {
    fileprivate var isError: Bool {
        if case .error = self { return true }
        return false
    }
}
