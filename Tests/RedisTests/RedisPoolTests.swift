import Redis
import ServiceLifecycle
import TestSupport
import Testing

@Suite("RedisPool")
struct RedisPoolTests {
    @Test func moreConcurrentCallersThanConnectionsAllComplete() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let pool = RedisPool(configuration: server.configuration(), size: 3, logger: testLogger)
            defer { pool.close() }
            try await pool.connect()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        _ = try await pool.send("INCR", "calls")
                        if index.isMultiple(of: 20) {
                            // Hold a connection for a while so others queue up.
                            _ = try await pool.send(RedisCommand("BLPOP", key: "never", "0.05").blocking())
                        }
                    }
                }
                try await group.waitForAll()
            }
            #expect(try await pool.send("GET", "calls").int == 200)
            let clients = try await pool.send("CLIENT", "LIST").string ?? ""
            #expect(clients.split(separator: "\n").count <= 3 + 1)
        }
    }

    @Test func waitersAreServedInArrivalOrder() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let pool = RedisPool(configuration: server.configuration(), size: 1, logger: testLogger)
            defer { pool.close() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Holds the only connection.
                group.addTask { _ = try await pool.send(RedisCommand("BLPOP", key: "never", "0.3").blocking()) }
                try await Task.sleep(for: .milliseconds(50))
                for index in 0..<5 {
                    group.addTask { _ = try await pool.send("RPUSH", "order", index) }
                    try await Task.sleep(for: .milliseconds(20))
                }
                try await group.waitForAll()
            }
            let order = try await pool.send("LRANGE", "order", 0, -1).array?.compactMap(\.int)
            #expect(order == [0, 1, 2, 3, 4])
        }
    }

    @Test func cancelledWaiterLeavesThePoolUsable() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let pool = RedisPool(configuration: server.configuration(), size: 1, logger: testLogger)
            defer { pool.close() }
            let holder = Task { try await pool.send(RedisCommand("BLPOP", key: "never", "0.3").blocking()) }
            try await Task.sleep(for: .milliseconds(50))
            let waiter = Task { try await pool.send("INCR", "cancelled") }
            try await Task.sleep(for: .milliseconds(50))
            waiter.cancel()
            await #expect(throws: CancellationError.self) { _ = try await waiter.value }
            _ = try await holder.value
            #expect(try await pool.send("GET", "cancelled").isNull)  // never ran
            #expect(try await pool.send("PING") == .status("PONG"))
        }
    }

    @Test func waitersBeyondTheBoundAreRefused() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let pool = RedisPool(configuration: server.configuration(), size: 1, maxWaiters: 1, logger: testLogger)
            defer { pool.close() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Holds the only connection.
                group.addTask { _ = try await pool.send(RedisCommand("BLPOP", key: "never", "0.5").blocking()) }
                try await Task.sleep(for: .milliseconds(100))
                group.addTask { _ = try await pool.send("PING") }  // the one allowed waiter
                try await Task.sleep(for: .milliseconds(100))
                await #expect(throws: RedisError.connectionFailed("pool exhausted (1 callers waiting)")) {
                    _ = try await pool.send("PING")
                }
                try await group.waitForAll()
            }
        }
    }

    @Test func closeFailsWaitersAndLaterCalls() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let pool = RedisPool(configuration: server.configuration(), size: 1, logger: testLogger)
            let holder = Task { try await pool.send(RedisCommand("BLPOP", key: "never", "0.3").blocking()) }
            try await Task.sleep(for: .milliseconds(100))
            let waiter = Task { try await pool.send("PING") }
            try await Task.sleep(for: .milliseconds(50))
            pool.close()
            await #expect(throws: RedisError.closed) { _ = try await waiter.value }
            await #expect(throws: RedisError.closed) { _ = try await pool.send("PING") }
            _ = try? await holder.value
        }
    }

    @Test func connectFailsFastWhenRedisIsUnreachable() async throws {
        let port = try await withRedisServer { (server: RedisServer) async throws in server.port }
        let configuration = RedisConfiguration(port: port, connectTimeout: .milliseconds(500))
        let pool = RedisPool(configuration: configuration, size: 4, logger: testLogger)
        defer { pool.close() }
        let clock = ContinuousClock()
        let started = clock.now
        do {
            try await pool.connect()
            Issue.record("pool connected to a closed port")
        } catch let error as RedisError {
            #expect(error.code == "connection_failed", "\(error)")
        }
        #expect(clock.now - started < .seconds(4))
    }

    @Test func runClosesThePoolOnGracefulShutdown() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let pool = RedisPool(configuration: server.configuration(), size: 2, logger: testLogger)
            try await pool.connect()
            let group = ServiceGroup(services: [pool], logger: testLogger)
            let running = Task { try await group.run() }
            #expect(try await pool.send("PING") == .status("PONG"))
            await group.triggerGracefulShutdown()
            try await running.value
            await #expect(throws: RedisError.closed) { _ = try await pool.send("PING") }
        }
    }
}
