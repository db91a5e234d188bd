import Foundation
import Pipeline
import Redis
import TestSupport
import Testing

/// The events streams' bounds beyond the retention (``StreamBounds``): a consumer group whose readers are gone stops
/// holding entries, and a byte cap cuts the oldest entries whatever a group still needs.
@Suite struct StreamJanitorBoundsTests {
    let events = Keys(prefix: "t").events()

    @Test func aGroupIdlePastItsLimitStopsHoldingWhileALiveOneStillHolds() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let stream = events.stream
            _ = try await pool.xgroupCreate(stream, group: "gone")
            _ = try await pool.xgroupCreate(stream, group: "live")
            var ids: [String] = []
            for n in 1...4 { ids.append(try #require(try await pool.xadd(stream, fields: [("n", Array("\(n)".utf8))]))) }
            // Both read 1 and 2; "gone" never acknowledges and stops reading.
            _ = try await pool.xreadgroup(group: "gone", consumer: "a", stream: stream, count: 2, block: nil)
            _ = try await pool.xreadgroup(group: "live", consumer: "b", stream: stream, count: 2, block: nil)
            #expect(try await pool.xack(stream, group: "live", ids: [ids[0], ids[1]]) == 2)

            let strict = StreamJanitor(
                streams: [events], redis: pool, retention: nil,
                bounds: StreamBounds(groupIdleLimit: .seconds(3600)), logger: testLogger)
            #expect(try await strict.trimOnce()[stream] == 0, "within its limit, the silent group still holds 1 and 2")

            // Generous margins: the live group's read just below must stay within the limit on a loaded machine.
            try await Task.sleep(for: .milliseconds(5000))
            _ = try await pool.xreadgroup(group: "live", consumer: "b", stream: stream, count: 1, block: nil)
            let bounded = StreamJanitor(
                streams: [events], redis: pool, retention: nil,
                bounds: StreamBounds(groupIdleLimit: .seconds(4)), logger: testLogger)
            #expect(try await bounded.trimOnce()[stream] == 2, "past its limit it holds nothing; the live group's needs stay")
            #expect(try await pool.xrange(stream).map(\.id) == Array(ids[2...]))
        }
    }

    @Test func aStreamPastItsByteCapLosesItsOldestEntriesEvenUnread() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let stream = events.stream
            _ = try await pool.xgroupCreate(stream, group: "slow")
            let payload = Array(String(repeating: "x", count: 1000).utf8)
            for n in 0..<1000 { _ = try await pool.xadd(stream, fields: [("n", Array("\(n)".utf8)), ("event", payload)]) }
            let before = try await pool.send(RedisCommand("MEMORY", "USAGE", stream, "SAMPLES", "0")).int ?? 0
            #expect(before > 900_000)
            let cap = 400_000
            let janitor = StreamJanitor(
                streams: [events], redis: pool, retention: nil, bounds: StreamBounds(maxBytes: cap), logger: testLogger)
            let removed = try #require(try await janitor.trimOnce()[stream])
            #expect(removed > 550 && removed < 700, "cut to about nine tenths of the cap: \(removed)")
            let after = try await pool.send(RedisCommand("MEMORY", "USAGE", stream, "SAMPLES", "0")).int ?? 0
            #expect(after <= cap, "\(after) bytes")
            let oldest = try #require(try await pool.xrange(stream, count: 1).first)
            #expect(oldest.string("n") == String(removed), "the oldest entries went, in order")
            #expect(try await janitor.trimOnce()[stream] == 0, "under the cap nothing more goes")
        }
    }
}
