import Foundation
import Pipeline
import Redis
import TestSupport
import Testing

@Suite struct StreamJanitorTests {
    let keys = Keys(prefix: "t").jobs()

    @Test func trimmingNeverRemovesPendingOrUndeliveredEntries() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let stream = keys.stream
            _ = try await pool.xgroupCreate(stream, group: "g1")
            _ = try await pool.xgroupCreate(stream, group: "g2")
            var ids: [String] = []
            for n in 1...6 {
                ids.append(try #require(try await pool.xadd(stream, fields: [("n", Array("\(n)".utf8))])))
            }
            // g1 holds 3 and 4 pending (1, 2 acked); g2 acked 1, 2 and never saw 3-6.
            _ = try await pool.xreadgroup(group: "g1", consumer: "a", stream: stream, count: 4, block: nil)
            #expect(try await pool.xack(stream, group: "g1", ids: [ids[0], ids[1]]) == 2)
            _ = try await pool.xreadgroup(group: "g2", consumer: "b", stream: stream, count: 2, block: nil)
            #expect(try await pool.xack(stream, group: "g2", ids: [ids[0], ids[1]]) == 2)

            let janitor = StreamJanitor(streams: [keys], redis: pool, logger: testLogger)
            #expect(try await janitor.trimOnce()[stream] == 2)
            #expect(try await pool.xrange(stream).map(\.id) == Array(ids[2...]))

            // g2 catches up; g1 still holds 3: nothing more goes.
            _ = try await pool.xreadgroup(group: "g2", consumer: "b", stream: stream, count: 10, block: nil)
            #expect(try await pool.xack(stream, group: "g2", ids: Array(ids[2...])) == 4)
            #expect(try await janitor.trimOnce()[stream] == 0)
            #expect(try await pool.xlen(stream) == 4)

            // g1 acks 3: it goes; 4 (pending) and 5, 6 (undelivered to g1) stay.
            #expect(try await pool.xack(stream, group: "g1", ids: [ids[2]]) == 1)
            #expect(try await janitor.trimOnce()[stream] == 1)
            #expect(try await pool.xrange(stream).map(\.id) == Array(ids[3...]))
            #expect(try await pool.xpendingSummary(stream, group: "g1").smallestID == ids[3])
        }
    }

    @Test func retentionWindowAndStreamsWithoutGroupsAreKept() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let other = Keys(prefix: "t").events()
            _ = try await pool.xadd(other.stream, fields: [("n", Array("1".utf8))])
            _ = try await pool.xgroupCreate(keys.stream, group: "g")
            let id = try #require(try await pool.xadd(keys.stream, fields: [("n", Array("1".utf8))]))
            _ = try await pool.xreadgroup(group: "g", consumer: "a", stream: keys.stream, count: 1, block: nil)
            #expect(try await pool.xack(keys.stream, group: "g", ids: [id]) == 1)

            let keeping = StreamJanitor(streams: [keys, other], redis: pool, retention: .seconds(3600), logger: testLogger)
            #expect(try await keeping.trimOnce() == [keys.stream: 0, other.stream: 0])
            let trimming = StreamJanitor(streams: [keys, other], redis: pool, logger: testLogger)
            #expect(try await trimming.trimOnce() == [keys.stream: 1, other.stream: 0])
            #expect(try await pool.xlen(other.stream) == 1)
            // A key that does not exist is skipped, not an error.
            let missing = StreamJanitor(streams: [Keys(prefix: "t").stream("nothing")], redis: pool, logger: testLogger)
            #expect(try await missing.trimOnce().values.allSatisfy { $0 == 0 })
        }
    }

    @Test func aStreamWithoutGroupsIsTrimmedToItsRetentionWindowOnly() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let events = Keys(prefix: "t").events().stream
            let now = UInt64(Date().timeIntervalSince1970 * 1000)
            // Two events older than a day, one an hour old, one new.
            for milliseconds in [now - 90_000_000, now - 86_500_000, now - 3_600_000] {
                _ = try await pool.send(RedisCommand("XADD", events, "\(milliseconds)-0", "n", "1"), timeout: .seconds(5))
            }
            _ = try await pool.xadd(events, fields: [("n", Array("1".utf8))])
            let janitor = StreamJanitor(
                streams: [Keys(prefix: "t").events()], redis: pool, retention: .seconds(86_400),
                logger: testLogger)
            #expect(try await janitor.trimOnce() == [events: 2])
            #expect(try await pool.xlen(events) == 2)
            #expect(try await janitor.trimOnce() == [events: 0])
        }
    }

    @Test func idleConsumersHoldingNothingArePrunedAndBusyOnesKept() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            try await PipelineFunctions.library.load(on: pool)
            _ = try await pool.xgroupCreate(keys.stream, group: "g")
            _ = try await pool.xadd(keys.stream, fields: [("n", Array("1".utf8))])
            _ = try await pool.xreadgroup(group: "g", consumer: "busy", stream: keys.stream, count: 1, block: nil)
            _ = try await pool.send(RedisCommand("XGROUP", "CREATECONSUMER", keys.stream, "g", "gone"), timeout: .seconds(5))
            let janitor = StreamJanitor(streams: [keys], redis: pool, logger: testLogger)
            // Nobody has been idle for 10 s yet.
            #expect(try await janitor.pruneIdleConsumers(of: keys.stream, idleLimit: .seconds(10)) == 0)
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await janitor.pruneIdleConsumers(of: keys.stream, idleLimit: .milliseconds(200)) == 1)
            let names = (try await pool.send(RedisCommand("XINFO", "CONSUMERS", keys.stream, "g"), timeout: .seconds(5)).array ?? [])
                .compactMap { $0.array?[1].string }
            #expect(names == ["busy"])  // it still holds its pending entry
            #expect(try await pool.xpendingSummary(keys.stream, group: "g").count == 1)
        }
    }
}
