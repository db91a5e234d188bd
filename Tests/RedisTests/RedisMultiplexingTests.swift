import Redis
import TestSupport
import Testing

@Suite("RedisConnection: multiplexing")
struct RedisMultiplexingTests {
    /// Many tasks share one connection at once; each gets exactly its own replies, in its own order.
    @Test func interleavedCallersGetTheirOwnReplies() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer { redis.close() }
            _ = try await redis.send("CLIENT", "SETNAME", "shared")
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<64 {
                    group.addTask {
                        for round in 0..<50 {
                            let value = "t\(task)-r\(round)"
                            #expect(try await redis.send("ECHO", value) == .bulk(Array(value.utf8)))
                            let replies = try await redis.pipeline([
                                RedisCommand("SET", "key:\(task)", value), RedisCommand("INCR", "count:\(task)"),
                                RedisCommand("GET", "key:\(task)"),
                            ])
                            #expect(replies == [.status("OK"), .integer(Int64(round + 1)), .bulk(Array(value.utf8))])
                        }
                    }
                }
                try await group.waitForAll()
            }
            // One connection carried all of it: the server saw one client named "shared" and no reconnect.
            let clients = try await redis.send("CLIENT", "LIST").string ?? ""
            #expect(clients.split(separator: "\n").filter { $0.contains("name=shared") }.count == 1)
            #expect(try await redis.send("CLIENT", "GETNAME").string == "shared")
        }
    }

    /// The connection is killed by the server again and again while 32 tasks have commands in flight: every
    /// call ends with its own reply or an error saying the outcome is unknown (or that nothing was sent),
    /// never with another command's reply, and the connection comes back each time.
    @Test func aConnectionKilledWithCommandsInFlightNeverMixesReplies() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            var configuration = server.configuration()
            configuration.clientName = "victim"
            let redis = RedisConnection(configuration: configuration, logger: testLogger)
            let admin = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer {
                redis.close()
                admin.close()
            }
            try await redis.connect()
            let outcomes = try await withThrowingTaskGroup(of: (ok: Int, unknown: Int).self) { group in
                for task in 0..<32 {
                    group.addTask {
                        var ok = 0
                        var unknown = 0
                        for round in 0..<150 {
                            let value = "\(task):\(round)"
                            do {
                                let reply = try await redis.send("ECHO", value)
                                #expect(reply == .bulk(Array(value.utf8)), "\(value) got \(reply)")
                                ok += 1
                            } catch let error as RedisError {
                                #expect(error.code == "unknown_outcome" || error.code == "connection_failed", "\(error)")
                                unknown += 1
                            }
                        }
                        return (ok, unknown)
                    }
                }
                group.addTask {
                    var kills = 0
                    while kills < 5 {
                        try await Task.sleep(for: .milliseconds(20))
                        if let killed = try? await admin.send("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes").int, killed > 0 {
                            kills += 1
                        }
                    }
                    return (0, 0)
                }
                return try await group.reduce((ok: 0, unknown: 0)) { ($0.ok + $1.ok, $0.unknown + $1.unknown) }
            }
            #expect(outcomes.ok + outcomes.unknown == 32 * 150)
            #expect(outcomes.unknown > 0, "no command was in flight at any of the kills")
            #expect(outcomes.ok > 0)
            // The connection comes back. The last kill may land after the last echo, and then the next command meets
            // the closed socket and ends `unknown_outcome` (it was sent): a second one goes on the new connection.
            let name = await eventuallyValue(timeout: .seconds(10)) { try? await redis.send("CLIENT", "GETNAME").string }
            #expect(name == "victim")
        }
    }

    /// Commands queued behind a blocking read are not sent: cancelling some of them leaves exactly the others
    /// to run once the read returns.
    @Test func cancelledQueuedCommandsNeverRun() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            let admin = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer {
                redis.close()
                admin.close()
            }
            try await redis.connect()
            let blocked = Task { try await redis.send(RedisCommand("BLPOP", key: "wake", 10).blocking(), timeout: .seconds(20)) }
            try await Task.sleep(for: .milliseconds(100))
            let queued = (0..<40).map { index in
                Task { try await redis.send("SADD", "ran", index) }
            }
            try await Task.sleep(for: .milliseconds(200))
            for (index, task) in queued.enumerated() where index.isMultiple(of: 2) { task.cancel() }
            _ = try await admin.send("RPUSH", "wake", "now")
            #expect(try await blocked.value == .array([.bulk(Array("wake".utf8)), .bulk(Array("now".utf8))]))
            for (index, task) in queued.enumerated() {
                if index.isMultiple(of: 2) {
                    await #expect(throws: CancellationError.self) { _ = try await task.value }
                } else {
                    #expect(try await task.value == .integer(1))
                }
            }
            let ran = try await admin.send("SMEMBERS", "ran").array?.compactMap(\.string).compactMap { Int($0) }
            #expect(Set(ran ?? []) == Set(stride(from: 1, to: 40, by: 2)))
        }
    }

    /// A command its builder declares blocking holds its connection without a timeout of its own: the `WAIT` a durable
    /// Function call ends with (``RedisFunctionLibrary/pipeline(_:on:durability:)``) blocks for its timeout on a
    /// server without replicas, and ordinary commands on the pool finish meanwhile.
    @Test func aPoolRoutesAroundADeclaredBlockingCommand() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let pool = RedisPool(configuration: server.configuration(commandTimeout: .seconds(40)), size: 2, logger: testLogger)
            let admin = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer {
                pool.close()
                admin.close()
            }
            try await pool.connect()
            let library = RedisFunctionLibrary("tg", version: 1, functions: [], parts: [])
            let durable = Task {
                try await library.pipeline([], on: pool, durability: RedisDurability(replicas: 1, timeoutMilliseconds: 20_000))
            }
            let isBlocked = try await eventually(timeout: .seconds(20)) {
                (try await admin.send("CLIENT", "LIST").string ?? "").contains("cmd=wait")
            }
            #expect(isBlocked)
            let clock = ContinuousClock()
            let started = clock.now
            for index in 0..<10 { _ = try await pool.send("INCR", "n\(index % 7)") }
            // Queued behind the WAIT, they would have waited its 20 s. The bound leaves room for a loaded run, whose
            // suite shares two cores (one such run took 12 s for 50 round trips).
            #expect(clock.now - started < .seconds(15), "ordinary commands waited behind the WAIT")
            #expect(try await durable.value.replicas == 0)
        }
    }

    /// A pool routes ordinary commands around a connection held by a blocking read: they finish while the read
    /// still blocks (queued behind it, they would wait for ever; the read is woken only after them).
    @Test func aPoolRoutesAroundABlockedConnection() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let pool = RedisPool(configuration: server.configuration(), size: 2, logger: testLogger)
            let admin = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer {
                pool.close()
                admin.close()
            }
            try await pool.connect()
            let blocked = Task { try await pool.send(RedisCommand("BLPOP", key: "wake", 0).blocking(), timeout: .zero) }
            let isBlocked = try await eventually(timeout: .seconds(20)) {
                (try await admin.send("CLIENT", "LIST").string ?? "").contains("cmd=blpop")
            }
            #expect(isBlocked)
            let ordinary = Task {
                for index in 0..<50 { _ = try await pool.send("INCR", "n\(index % 7)") }
            }
            let finished = await withTaskGroup(of: Bool.self) { group in
                group.addTask { (try? await ordinary.value) != nil }
                group.addTask {
                    try? await Task.sleep(for: .seconds(30))
                    return false
                }
                defer { group.cancelAll() }
                return await group.next() ?? false
            }
            #expect(finished, "ordinary commands waited behind the blocked connection")
            _ = try await admin.send("RPUSH", "wake", "up")
            _ = try await blocked.value
            _ = try? await ordinary.value
            #expect(try await pool.send("GET", "n0").int == 8)
        }
    }
}
