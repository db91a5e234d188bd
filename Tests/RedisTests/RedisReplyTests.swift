import Redis
import TestSupport
import Testing

@Suite("Reply decoding against a real redis-server")
struct RedisReplyTests {
    @Test func decodesStatusIntegerBulkAndNil() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer { redis.close() }
            #expect(try await redis.send("SET", "k", "v") == .status("OK"))
            #expect(try await redis.send("INCRBY", "n", 41) == .integer(41))
            #expect(try await redis.send("INCR", "n").int == 42)
            #expect(try await redis.send("GET", "k") == .bulk(Array("v".utf8)))
            #expect(try await redis.send("GET", "k").string == "v")
            #expect(try await redis.send("GET", "n").int == 42)
            #expect(try await redis.send("GET", "missing").isNull)
            #expect(try await redis.send("GET", "").isNull)
        }
    }

    @Test func roundTripsBinaryPayloadsByteForByte() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer { redis.close() }
            let payload: [UInt8] = [0x00, 0xFF, 0x0D, 0x0A, 0x00, 0x80, 0x24, 0xFE, 0x00] + Array(0...255)
            let key: [UInt8] = [0x6B, 0x00, 0xFF]
            _ = try await redis.send(RedisCommand(arguments: [Array("SET".utf8), key, payload]))
            let reply = try await redis.send(RedisCommand(arguments: [Array("GET".utf8), key]))
            #expect(reply.bytes == payload)
            #expect(try await redis.send("STRLEN", key).int == Int64(payload.count))
            // Empty values are distinct from nil.
            _ = try await redis.send("SET", "empty", [UInt8]())
            #expect(try await redis.send("GET", "empty") == .bulk([]))
        }
    }

    @Test func decodesNestedArraysWithNilAndErrorsInside() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer { redis.close() }
            let script = """
                return {1, 'two', {3, {'four', false}}, redis.status_reply('FINE'), redis.error_reply('BAD inner')}
                """
            let reply = try await redis.send("EVAL", script, 0)
            #expect(
                reply
                    == .array([
                        .integer(1),
                        .bulk(Array("two".utf8)),
                        .array([.integer(3), .array([.bulk(Array("four".utf8)), .null])]),
                        .status("FINE"),
                        .error("BAD inner"),
                    ]))
        }
    }

    @Test func decodesStreamRangeAsNestedArrays() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer { redis.close() }
            _ = try await redis.send("XADD", "s", "1-1", "a", "1", "b", [UInt8]([0, 255]))
            let reply = try await redis.send("XRANGE", "s", "-", "+")
            #expect(
                reply
                    == .array([
                        .array([
                            .bulk(Array("1-1".utf8)),
                            .array([
                                .bulk(Array("a".utf8)), .bulk(Array("1".utf8)), .bulk(Array("b".utf8)), .bulk([0, 255]),
                            ]),
                        ])
                    ]))
            #expect(try await redis.send("XRANGE", "nothing", "-", "+") == .array([]))
        }
    }

    @Test func convertsArguments() {
        #expect(
            RedisCommand("SET", "k", 12, Int64(-3), UInt64(7), 1.5, [UInt8]([0, 1]), "sub"[...]).arguments == [
                Array("SET".utf8), Array("k".utf8), Array("12".utf8), Array("-3".utf8), Array("7".utf8),
                Array("1.5".utf8), [0, 1], Array("sub".utf8),
            ])
    }

    @Test func replyAccessors() {
        #expect(RedisReply.bulk(Array("17".utf8)).int == 17)
        #expect(RedisReply.status("OK").string == "OK")
        #expect(RedisReply.integer(3).string == nil)
        #expect(RedisReply.array([.null]).array == [.null])
        #expect(RedisReply.null.isNull)
        #expect(!RedisReply.bulk([]).isNull)
    }
}
