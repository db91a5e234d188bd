import Redis
import Synchronization
import TestSupport
import Testing

/// Commands declare their keys (``RedisCommand/keyIndices``), so the cluster client routes them without a table of
/// command names; the table stays the fallback for commands built by name.
@Suite("Redis commands declare their keys")
struct RedisCommandKeysTests {
    static func text(_ keys: [[UInt8]]?) -> [String]? {
        keys?.map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func blockingIsDeclaredNotInferred() {
        #expect(!RedisCommand("BLPOP", key: "l", 0).isBlocking)
        #expect(RedisCommand("BLPOP", key: "l", 0).blocking().isBlocking)
        #expect(RedisCommand("BLPOP", key: "l", 0).blocking().declaredKeys == [Array("l".utf8)])
    }

    /// What keeps production commands declared: ``CheckedExecutor`` with ``CheckedExecutor/Checks/declaredKeys`` (the ledger tests hand it to the applier)
    /// refuses a command built by name only, before sending it.
    @Test func anUndeclaredCommandIsRefusedWhereDeclarationsAreRequired() async throws {
        let nowhere = RedisConnection(configuration: RedisConfiguration(port: 1), logger: testLogger)
        defer { nowhere.close() }
        let redis = CheckedExecutor(nowhere, .declaredKeys)
        await #expect(throws: RedisError.protocolError("GET does not declare its keys")) { try await redis.send("GET", "k") }
        await #expect(throws: RedisError.protocolError("MULTI does not declare its keys")) {
            try await redis.pipeline([RedisCommand(keyless: "PING"), RedisCommand("MULTI")])
        }
        #expect(throws: Never.self) { try CheckedExecutor.check(RedisCommand(keyless: "MULTI"), .declaredKeys) }
        #expect(throws: Never.self) { try CheckedExecutor.check(RedisCommand("GET", key: "k"), .declaredKeys) }
    }

    @Test func declaredKeysRouteWithoutTheTable() throws {
        let unknown = RedisCommand("TG.SOMETHING", arguments: ["x", "{p3}k", 1], keysAt: [1])
        #expect(Self.text(unknown.declaredKeys) == ["{p3}k"])
        #expect(ClusterRoute.tableKeys(of: unknown) == nil)
        #expect(try ClusterRoute.of(unknown) == .slot(ClusterKeySlot.slot("p3")))
        #expect(try ClusterRoute.of(RedisCommand("TG.SOMETHING", "x", "{p3}k")) == .anyPrimary)
        // A declaration wins over the table, also an empty one.
        #expect(try ClusterRoute.of(RedisCommand("XLEN", arguments: ["s"], keysAt: [])) == .anyPrimary)
        #expect(try ClusterRoute.of(RedisCommand("XLEN", key: "{p3}s")) == .slot(ClusterKeySlot.slot("p3")))
        #expect(throws: RedisError.self) { try ClusterRoute.of(RedisCommand("X", arguments: ["{a}1", "{b}2"], keysAt: [0, 1])) }
        // Positions outside the arguments (or the name's) are dropped, never indexed.
        #expect(RedisCommand("X", arguments: ["a"], keysAt: [0, 5, -1]).keyIndices == [1])
        #expect(RedisCommand(arguments: [Array("X".utf8), Array("a".utf8)], keyIndices: [0, 1, 2]).keyIndices == [1])
        #expect(RedisCommand("GET", "a").declaredKeys == nil)

        let library = RedisFunctionLibrary("tg", version: 1, functions: ["apply"], parts: [])
        let call = library.command("apply", keys: [Array("{p1}a".utf8), Array("{p1}b".utf8)], arguments: [Array("x".utf8)])
        #expect(Self.text(call.declaredKeys) == ["{p1}a", "{p1}b"])
        #expect(call.declaredKeys == ClusterRoute.tableKeys(of: call))
    }

    /// Every command the `RedisCommandExecutor` helpers send declares its keys, and they are the keys Redis itself
    /// finds at the command's key positions (`COMMAND GETKEYS`) — run against a real server.
    @Test func theHelpersDeclareTheKeysRedisFinds() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let connection = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer { connection.close() }
            let redis = RecordingExecutor(base: connection)
            _ = try await redis.xgroupCreate("{p2}s", group: "g")
            let id = try #require(try await redis.xadd("{p2}s", fields: [("f", [1])]))
            _ = try await redis.xreadgroup(group: "g", consumer: "c", stream: "{p2}s", count: 1, block: .milliseconds(1))
            _ = try await redis.xpendingSummary("{p2}s", group: "g")
            _ = try await redis.xpending("{p2}s", group: "g", count: 5, consumer: "c", minIdle: .zero)
            _ = try await redis.xautoclaim("{p2}s", group: "g", consumer: "c", minIdle: .zero, count: 5)
            _ = try await redis.xack("{p2}s", group: "g", ids: [id])
            _ = try await redis.xinfoGroups("{p2}s")
            _ = try await redis.xrange("{p2}s", count: 2)
            _ = try await redis.xtrimMinID("{p2}s", minID: "0-1", approximate: true)
            _ = try await redis.xlen("{p2}s")
            _ = try await redis.hgetall("{p2}h")
            _ = try await redis.functionLoad("#!lua name=keystest\nredis.register_function('kt', function(keys) return #keys end)")
            #expect(try await redis.fcall("kt", keys: ["{p2}a", "{p2}b"], arguments: ["x"]) == .integer(2))
            try await redis.scanKeys(match: "{p2}*") { _ in }
            _ = try await redis.xreadgroup(group: "g", consumer: "c", stream: "{p2}s", count: 1, block: nil)
            let library = RedisFunctionLibrary("tg", version: 1, functions: [], parts: [])
            _ = try await library.pipeline([], on: redis, durability: RedisDurability(replicas: 1, timeoutMilliseconds: 1))

            let commands = redis.commands
            #expect(commands.count >= 17)
            // The helpers that build a command the server may hold declare it blocking, and only those: a multiplexed
            // connection and a pool route around exactly these (``RedisCommand/isBlocking``).
            #expect(commands.filter(\.isBlocking).map(\.name) == ["XREADGROUP", "WAIT"])
            #expect(commands.filter { $0.name == "XREADGROUP" }.map(\.isBlocking) == [true, false])
            for command in commands {
                let declared = try #require(command.declaredKeys, "\(command.name) declares no keys")
                // An error reply is "The command has no key arguments" (SCAN, FUNCTION LOAD).
                let found = try? await connection.send(RedisCommand("COMMAND", arguments: ["GETKEYS"] + command.arguments))
                let redisKeys = found?.array?.compactMap(\.bytes) ?? []
                #expect(declared == redisKeys, "\(command.name)")
                try CheckedExecutor.check(command, .sameSlot)
            }
        }
    }
}

/// Passes commands to a real server's connection and keeps them.
private final class RecordingExecutor: RedisCommandExecutor {
    let base: RedisConnection
    private let recorded = Mutex<[RedisCommand]>([])

    init(base: RedisConnection) { self.base = base }

    var commands: [RedisCommand] { recorded.withLock { $0 } }

    func send(_ command: RedisCommand, timeout: Duration?) async throws -> RedisReply {
        recorded.withLock { $0.append(command) }
        return try await base.send(command, timeout: timeout)
    }

    func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        recorded.withLock { $0 += commands }
        return try await base.pipeline(commands)
    }
}
