import Redis
import TestSupport
import Testing

@Suite("RedisConnection: reconnect and timeouts")
struct RedisReconnectTests {
    @Test func reconnectsAfterServerIsKilledAndRestarted() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            var configuration = server.configuration(commandTimeout: .seconds(1))
            configuration.clientName = "survivor"
            let redis = RedisConnection(configuration: configuration, logger: testLogger)
            defer { redis.close() }
            _ = try await redis.send("SET", "durable", "yes")

            await server.kill()
            #expect(!server.isRunning)
            do {
                _ = try await redis.send("GET", "durable")
                Issue.record("command succeeded with the server dead")
            } catch let error as RedisError {
                #expect(error.code == "unknown_outcome" || error.code == "connection_failed", "\(error)")
            }
            // Nothing listens now: the next command is not sent at all.
            await #expect(throws: RedisError.self) { _ = try await redis.send("PING") }

            try await server.restart()
            let reply = try await eventually { try await redis.send("GET", "durable") }
            #expect(reply.string == "yes")  // written with appendfsync always, replayed from the AOF
            #expect(try await redis.send("CLIENT", "GETNAME").string == "survivor")
        }
    }

    @Test func firstFailureAfterKillIsUnknownOutcome() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer { redis.close() }
            _ = try await redis.send("PING")
            await server.kill()
            // The connection was healthy, so the command was written (or its write failed): outcome unknown.
            do {
                _ = try await redis.send("INCR", "x")
                Issue.record("INCR succeeded with the server dead")
            } catch let error as RedisError {
                #expect(error.code == "unknown_outcome", "\(error)")
            }
            do {
                _ = try await redis.send("INCR", "x")
                Issue.record("INCR succeeded with the server dead")
            } catch let error as RedisError {
                #expect(error.code == "connection_failed", "\(error)")
            }
        }
    }

    @Test func commandTimeoutGivesUnknownOutcomeAndConnectionRecovers() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(
                configuration: server.configuration(commandTimeout: .milliseconds(200)),
                logger: testLogger)
            defer { redis.close() }
            let clock = ContinuousClock()
            let started = clock.now
            do {
                _ = try await redis.send(RedisCommand("BLPOP", key: "empty-list", 30).blocking())
                Issue.record("BLPOP returned before its timeout")
            } catch let error as RedisError {
                #expect(error.code == "unknown_outcome", "\(error)")
            }
            // The 200 ms command timeout ended it, not the 30 s block (the bound leaves room for a loaded CI machine,
            // where this took 4-6 s with a 5 s block and a 3 s bound).
            #expect(clock.now - started < .seconds(15))
            #expect(try await redis.send("PING") == .status("PONG"))
        }
    }

    @Test func debugSleepTimesOutThenRecovers() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(
                configuration: server.configuration(commandTimeout: .milliseconds(200)),
                logger: testLogger)
            defer { redis.close() }
            let clock = ContinuousClock()
            let started = clock.now
            do {
                _ = try await redis.send("DEBUG", "SLEEP", 15)
                Issue.record("DEBUG SLEEP 15 returned within a 200 ms timeout")
            } catch let error as RedisError {
                #expect(error.code == "unknown_outcome", "\(error)")
            }
            // Well before the 15 s sleep ends (a fresh-clone CI run took 6.7 s under the full suite's load, past the
            // 5 s bound this had with an 8 s sleep).
            #expect(clock.now - started < .seconds(11))
            // Redis sleeps on: PING fails (each within its 200 ms timeout) until it wakes, then answers.
            let reply = await eventuallyValue(timeout: .seconds(40)) { try? await redis.send("PING") }
            #expect(reply == .status("PONG"))
        }
    }

    @Test func pipelineFailingHalfwayIsUnknownOutcome() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(
                configuration: server.configuration(commandTimeout: .milliseconds(200)),
                logger: testLogger)
            defer { redis.close() }
            let commands = [
                RedisCommand("SET", "before", "1"),
                RedisCommand("DEBUG", "SLEEP", "0.6"),
                RedisCommand("SET", "after", "1"),
            ]
            do {
                _ = try await redis.pipeline(commands)
                Issue.record("pipeline succeeded although a reply timed out")
            } catch let error as RedisError {
                #expect(error.code == "unknown_outcome", "\(error)")
                #expect("\(error)".contains("of 3"))  // Redis flushes replies only after the sleep
            }
            // All three were sent: once the server wakes up, every write is there.
            let after = try await eventually { try await redis.send("MGET", "before", "after") }
            #expect(after == .array([.bulk(Array("1".utf8)), .bulk(Array("1".utf8))]))
        }
    }

    @Test func perCallTimeoutOverrideAllowsLongerBlockingCommand() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(
                configuration: server.configuration(commandTimeout: .milliseconds(200)),
                logger: testLogger)
            defer { redis.close() }
            _ = try await redis.send("CLIENT", "SETNAME", "same")
            let reply = try await redis.send(RedisCommand("BLPOP", key: "empty-list", "0.5").blocking(), timeout: .seconds(2))
            #expect(reply.isNull)
            // The socket timeout is back to 200 ms and the connection was kept.
            #expect(try await redis.send("CLIENT", "GETNAME").string == "same")
            await #expect(throws: RedisError.self) { _ = try await redis.send(RedisCommand("BLPOP", key: "empty-list", 1).blocking()) }
        }
    }

    @Test func closeInterruptsABlockingRead() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await redis.connect()
            let clock = ContinuousClock()
            let started = clock.now
            let blocked = Task { try await redis.send(RedisCommand("BLPOP", key: "never", 0).blocking(), timeout: .zero) }
            // Closed once the BLPOP is in flight (Redis counts it blocked): a command still queued when the
            // connection closes fails as `closed`, which is a different contract.
            let observer = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer { observer.close() }
            var isBlocked = false
            for _ in 0..<200 where !isBlocked {
                isBlocked = (try await observer.send("INFO", "clients").string ?? "").contains("blocked_clients:1")
                if !isBlocked { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(isBlocked, "the BLPOP never reached Redis")
            redis.close()
            do {
                _ = try await blocked.value
                Issue.record("BLPOP 0 returned a value")
            } catch let error as RedisError {
                #expect(error.code == "unknown_outcome", "\(error)")
            }
            #expect(clock.now - started < .seconds(10))  // BLPOP 0 never ends by itself; a loaded CI took 4.6 s
        }
    }

    @Test func cancellingABlockingReadInterruptsItAndTheConnectionRecovers() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer { redis.close() }
            try await redis.connect()
            let clock = ContinuousClock()
            let started = clock.now
            let blocked = Task { try await redis.send(RedisCommand("BLPOP", key: "never", 0).blocking(), timeout: .zero) }
            let queued = Task {
                try await Task.sleep(for: .milliseconds(50))
                return try await redis.send("INCR", "queued")
            }
            try await Task.sleep(for: .milliseconds(150))
            queued.cancel()
            await #expect(throws: CancellationError.self) { _ = try await queued.value }
            blocked.cancel()
            do {
                _ = try await blocked.value
                Issue.record("BLPOP 0 returned a value")
            } catch let error as RedisError {
                #expect(error.code == "unknown_outcome", "\(error)")
            }
            #expect(clock.now - started < .seconds(10))  // BLPOP 0 never ends by itself; a loaded CI took 4.6 s
            #expect(try await redis.send("GET", "queued").isNull)  // the cancelled INCR never ran
            #expect(try await redis.send("PING") == .status("PONG"))
        }
    }

    @Test func blockingReadGroupOutlivesCommandTimeout() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(
                configuration: server.configuration(commandTimeout: .milliseconds(200)),
                logger: testLogger)
            defer { redis.close() }
            #expect(try await redis.xgroupCreate("jobs", group: "g"))
            let clock = ContinuousClock()
            let started = clock.now
            let entries = try await redis.xreadgroup(
                group: "g", consumer: "c", stream: "jobs", count: 10,
                block: .milliseconds(600))
            #expect(entries.isEmpty)
            #expect(clock.now - started >= .milliseconds(550))
        }
    }
}

/// Retries `body` for up to 5 s (reconnect backoff may delay the first successful attempt).
func eventually<T>(_ body: () async throws -> T) async throws -> T {
    let deadline = ContinuousClock.now + .seconds(5)
    while true {
        do {
            return try await body()
        } catch {
            if ContinuousClock.now >= deadline { throw error }
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
