import Redis
import TestSupport
import Testing

@Suite("Redis Functions")
struct RedisFunctionsTests {
    static func library(version: Int) -> String {
        """
        #!lua name=tollgate_test_v\(version)
        redis.register_function('tg_test_set', function(keys, args)
          redis.call('SET', keys[1], args[1])
          return {\(version), redis.call('GET', keys[1]), {args[2] or false}}
        end)
        """
    }

    @Test func loadReplaceAndCall() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let pool = RedisPool(configuration: server.configuration(), size: 2, logger: testLogger)
            defer { pool.close() }
            #expect(try await pool.functionLoad(Self.library(version: 1)) == "tollgate_test_v1")
            // REPLACE: loading the same library again is not an error.
            #expect(try await pool.functionLoad(Self.library(version: 1)) == "tollgate_test_v1")
            let reply = try await pool.fcall("tg_test_set", keys: ["fk"], arguments: [[UInt8]([0, 0xFF]), "x"])
            #expect(reply == .array([.integer(1), .bulk([0, 0xFF]), .array([.bulk(Array("x".utf8))])]))
            let noExtra = try await pool.fcall("tg_test_set", keys: ["fk"], arguments: ["v"])
            #expect(noExtra.array?[2] == .array([.null]))
            do {
                _ = try await pool.fcall("tg_missing", keys: [], arguments: [])
                Issue.record("FCALL of a missing function succeeded")
            } catch RedisError.server(let code, _) {
                #expect(code == "ERR")
            }
            do {
                _ = try await pool.functionLoad("#!lua name=broken\nthis is not lua")
                Issue.record("loaded broken Lua")
            } catch let error as RedisError {
                #expect(error.code == "server")
            }
        }
    }

    /// The one way calls recover a lost library and wait for replicas: a batch finds the library missing (Redis
    /// flushed its functions), loads it again and sends again only the calls that failed; `WAIT` reports the
    /// replicas, and a standalone server has none.
    @Test func aPipelineReloadsALostLibraryAndReportsItsReplicas() async throws {
        let library = RedisFunctionLibrary(
            "pipetest", version: 1, functions: ["incr"],
            parts: [Array("redis.register_function(PREFIX .. 'incr', function(keys) return redis.call('INCR', keys[1]) end)".utf8)])
        try await withRedisServer { (server: RedisServer) async throws in
            let pool = RedisPool(configuration: server.configuration(), size: 2, logger: testLogger)
            defer { pool.close() }
            try await library.load(on: pool)
            let calls = ["a", "b"].map { library.command("incr", keys: [Array($0.utf8)], arguments: []) }
            var (replies, replicas) = try await library.pipeline(calls, on: pool)
            #expect(replies == [.integer(1), .integer(1)])
            #expect(replicas == nil)
            _ = try await pool.send("FUNCTION", "FLUSH")
            let oneReplica = RedisDurability(replicas: 1, timeoutMilliseconds: 10)
            (replies, replicas) = try await library.pipeline(calls, on: pool, durability: oneReplica)
            #expect(replies == [.integer(2), .integer(2)], "each call ran once more, after the reload")
            #expect(replicas == 0)
            #expect(!RedisDurability(replicas: 1).isMet(by: replicas))
            #expect(RedisDurability().isMet(by: nil))
        }
    }
}
