import Redis
import TestSupport
import Testing

@Suite("RedisConnection: errors, pipelining, handshake")
struct RedisConnectionTests {
    @Test func serverErrorIsTypedAndConnectionStaysUsable() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer { redis.close() }
            _ = try await redis.send("CLIENT", "SETNAME", "probe")
            await #expect(throws: RedisError.self) {
                _ = try await redis.send("XREADGROUP", "GROUP", "nope", "c", "STREAMS", "missing", ">")
            }
            do {
                _ = try await redis.send("XREADGROUP", "GROUP", "nope", "c", "STREAMS", "missing", ">")
            } catch RedisError.server(let code, let message) {
                #expect(code == "NOGROUP")
                #expect(message.hasPrefix("NOGROUP"))
            }
            do {
                _ = try await redis.send("LPUSH", "s", "x")
                _ = try await redis.send("GET", "s")
                Issue.record("GET on a list succeeded")
            } catch RedisError.server(let code, _) {
                #expect(code == "WRONGTYPE")
            }
            do {
                _ = try await redis.send("NOSUCHCOMMAND")
                Issue.record("unknown command succeeded")
            } catch RedisError.server(let code, _) {
                #expect(code == "ERR")
            }
            // Same connection (the name set above survives), not a reconnect.
            #expect(try await redis.send("CLIENT", "GETNAME").string == "probe")
        }
    }

    @Test func pipelinesAThousandCommandsWithAnErrorInTheMiddle() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer { redis.close() }
            var commands = (0..<1_000).map { _ in RedisCommand("INCR", "counter") }
            commands[500] = RedisCommand("HSET", "counter", "f", "v")  // WRONGTYPE
            let replies = try await redis.pipeline(commands)
            #expect(replies.count == 1_000)
            #expect(replies[0] == .integer(1))
            #expect(replies[499] == .integer(500))
            guard case .error(let text) = replies[500] else {
                Issue.record("expected an error reply, got \(replies[500])")
                return
            }
            #expect(text.hasPrefix("WRONGTYPE"))
            #expect(replies[501] == .integer(501))
            #expect(replies[999] == .integer(999))
            #expect(try await redis.send("GET", "counter").int == 999)
            #expect(try await redis.pipeline([]).isEmpty)
        }
    }

    @Test func handshakeAppliesDatabaseNameAndPassword() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let admin = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer { admin.close() }
            _ = try await admin.send("CONFIG", "SET", "requirepass", "pa ss")
            var configuration = try RedisConfiguration(url: "redis://:pa%20ss@127.0.0.1:\(server.port)/2")
            configuration.clientName = "tollgate-test"
            let redis = RedisConnection(configuration: configuration, logger: testLogger)
            defer { redis.close() }
            try await redis.connect()
            _ = try await redis.send("SET", "where", "db2")
            #expect(try await redis.send("CLIENT", "GETNAME").string == "tollgate-test")
            _ = try await admin.send("AUTH", "pa ss")
            #expect(try await admin.send("GET", "where").isNull)
            _ = try await admin.send("SELECT", 2)
            #expect(try await admin.send("GET", "where").string == "db2")

            var wrong = configuration
            wrong.password = "wrong"
            let rejected = RedisConnection(configuration: wrong, logger: testLogger)
            defer { rejected.close() }
            do {
                try await rejected.connect()
                Issue.record("connected with a wrong password")
            } catch RedisError.server(let code, _) {
                #expect(code == "WRONGPASS")
            }
            do {
                _ = try await rejected.send("PING")
                Issue.record("sent with a wrong password")
            } catch let error as RedisError {
                #expect(error.code == "connection_failed")
            }
        }
    }

    @Test func connectsByHostNameFromURL() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let configuration = try RedisConfiguration(url: "redis://localhost:\(server.port)/0")
            let redis = RedisConnection(configuration: configuration, logger: testLogger)
            defer { redis.close() }
            try await redis.connect()
            #expect(try await redis.send("ECHO", "hello") == .bulk(Array("hello".utf8)))
        }
    }

    @Test func closedConnectionRefusesCalls() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            #expect(try await redis.send("PING") == .status("PONG"))
            redis.close()
            await #expect(throws: RedisError.closed) { _ = try await redis.send("PING") }
            await #expect(throws: RedisError.closed) { _ = try await redis.pipeline([RedisCommand("PING")]) }
        }
    }

    @Test func unreachableRedisFailsFast() async throws {
        let port = try await withRedisServer { $0.port }  // nothing listens there any more
        let configuration = RedisConfiguration(port: port, connectTimeout: .milliseconds(500))
        let redis = RedisConnection(configuration: configuration, logger: testLogger)
        defer { redis.close() }
        let clock = ContinuousClock()
        let started = clock.now
        do {
            try await redis.connect()
            Issue.record("connected to a closed port")
        } catch let error as RedisError {
            #expect(error.code == "connection_failed")
            #expect("\(error)".contains("127.0.0.1:\(port)"))
        }
        #expect(clock.now - started < .seconds(4))  // fails fast, not after a hang
        await #expect(throws: RedisError.self) { _ = try await redis.send("PING") }
    }

    /// A socket that listens but never answers (TCP connects, Redis never replies): `connect()` fails at the
    /// configured command timeout. Timed side by side with a connection configured 4 s longer, started at the same
    /// moment, so that a loaded machine delays both alike.
    @Test func silentServerFailsConnectWithinCommandTimeout() async throws {
        let listener = try SilentListener()
        defer { listener.close() }
        @Sendable func timedConnect(_ timeout: Duration) async -> Duration {
            let configuration = RedisConfiguration(port: listener.port, connectTimeout: timeout, commandTimeout: timeout)
            let redis = RedisConnection(configuration: configuration, logger: testLogger)
            defer { redis.close() }
            let clock = ContinuousClock()
            let started = clock.now
            do {
                try await redis.connect()
                Issue.record("connect() succeeded against a server that never answers")
            } catch let error as RedisError {
                #expect(error.code == "connection_failed", "\(error)")
                #expect("\(error)".contains("PING"))
            } catch {
                Issue.record("unexpected error \(error)")
            }
            return clock.now - started
        }
        async let quick = timedConnect(.milliseconds(300))
        async let patient = timedConnect(.milliseconds(4300))
        let (short, long) = await (quick, patient)
        #expect(long >= .milliseconds(4300))
        // Both run at once, so a loaded machine delays both alike; a connect that ignored its timeout would take as
        // long as the patient one.
        #expect(short + .seconds(1) < long, "a 300 ms timeout took \(short), a 4.3 s one \(long)")
    }
}
