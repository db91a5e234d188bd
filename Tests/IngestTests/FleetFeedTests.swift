import Core
import Foundation
import Hummingbird
import HummingbirdTesting
import Pipeline
import Redis
import TestSupport
import Testing

@testable import ingest

/// `GET /v1/events` on 16 partitions (docs/EVENTS.md, "Pulling"): a page reads a small multiple of `limit` in all,
/// never `limit` per partition, and paging through the whole feed still yields every event exactly once, in the
/// promised global order, while other projects' entries use up reads and give nothing.
@Suite(.serialized) struct FleetFeedTests {
    static let partitions = 16
    static func keys() throws -> Keys { Keys(prefix: "tg", layout: try PartitionLayout(count: partitions)) }

    /// The most entries one page may read, whatever the streams hold: twice the page, plus one entry per partition
    /// (the least that orders a page at all).
    static func readBound(limit: Int) -> Int { 2 * limit + partitions }

    @Test func pagingOnSixteenPartitionsYieldsEveryEventOnceInOrderAndReadsBoundedPages() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server, configure: IngestHarness.partitions(Self.partitions)) { client in
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let writer = ContractEventWriter(redis: redis, keys: try Self.keys())
                let games = try #require(ProjectID("games"))
                // 48 users of this project spread over the partitions, a burst of another project's events in one
                // partition in the middle (they fill reads and answer nothing), and app-level events.
                for round in 0..<16 {
                    for user in 0..<48 { try await writer.append(user: "u\(user)") }
                    if round == 6 {
                        for _ in 0..<400 { try await writer.append(user: "whale", project: games) }
                    }
                    if round % 4 == 0 { try await writer.append(user: nil, type: "app_notification") }
                }
                let expected = try await Self.globalOrder(redis)
                #expect(expected.count == 16 * 48 + 4)

                let walk = try await Self.walk(client, redis, limit: 50)
                #expect(walk.ids.count == expected.count, "every event once")
                #expect(walk.ids == expected, "in the global order (entry id, then partition)")
                #expect(Set(walk.ids).count == walk.ids.count, "never twice")
                #expect(walk.maxRead <= Self.readBound(limit: 50), "read \(walk.maxRead) entries for a page of 50")
                #expect(walk.stalled == 0, "every page moved the cursor or ended the feed")
            }
        }
    }

    /// The figures of issue 42 item 7: 16 partitions holding 20,000 events, pages of 1,000.
    @Test func aPageOfAThousandOnSixteenPartitionsReadsAboutTwoThousandEntries() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server, configure: IngestHarness.partitions(Self.partitions)) { client in
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let writer = ContractEventWriter(redis: redis, keys: try Self.keys())
                for _ in 0..<125 {
                    for user in 0..<160 { try await writer.append(user: "user\(user)") }
                }
                let expected = try await Self.globalOrder(redis)
                _ = try await redis.send("CONFIG", "RESETSTAT")
                let started = ContinuousClock.now
                let walk = try await Self.walk(client, redis, limit: 1000)
                let elapsed = ContinuousClock.now - started
                let stats = try await redis.send("INFO", "commandstats").string ?? ""
                let xrange = stats.split(separator: "\r\n").first { $0.hasPrefix("cmdstat_xrange:") } ?? ""
                print(
                    "fleet feed, 16 partitions, 20000 events, limit=1000: pages=\(walk.pages) entries read per page "
                        + "max=\(walk.maxRead) mean=\(walk.totalRead / max(1, walk.pages)) walk=\(elapsed) \(xrange)")
                #expect(walk.ids == expected)
                #expect(walk.maxRead <= Self.readBound(limit: 1000), "read \(walk.maxRead) entries for a page of 1000")
            }
        }
    }

    struct Walk {
        var ids: [String] = []
        var pages = 0
        var maxRead = 0
        var totalRead = 0
        /// Pages that answered nothing, kept the cursor and still said `hasMore`: a consumer would spin on them.
        var stalled = 0
    }

    /// Pages through the feed from its start, counting the entries each page read from the events streams.
    static func walk(_ client: any TestClientProtocol, _ redis: RedisConnection, limit: Int) async throws -> Walk {
        let service = try IngestHarness.apiKeyHeaders()
        _ = try await redis.send("CONFIG", "SET", "slowlog-log-slower-than", "0")
        _ = try await redis.send("CONFIG", "SET", "slowlog-max-len", "4096")
        var walk = Walk()
        var cursor: String?
        while walk.pages < 1000 {
            _ = try await redis.send("SLOWLOG", "RESET")
            let query = cursor.map { "?limit=\(limit)&cursor=\($0)" } ?? "?limit=\(limit)"
            let response = try await client.execute(uri: "/v1/events\(query)", method: .get, headers: service)
            #expect(response.status == .ok)
            let page = IngestHarness.json(response)
            let read = try await entriesRead(redis)
            walk.pages += 1
            walk.maxRead = max(walk.maxRead, read)
            walk.totalRead += read
            let events = (page["events"]?.array ?? []).compactMap { $0["id"]?.string }
            walk.ids += events
            let next = try #require(page["cursor"]?.string)
            let hasMore = try #require(page["hasMore"]?.bool)
            if events.isEmpty && next == cursor && hasMore { walk.stalled += 1 }
            cursor = next
            if !hasMore { break }
        }
        _ = try await redis.send("CONFIG", "SET", "slowlog-log-slower-than", "10000")
        return walk
    }

    /// The entries the `XRANGE`s of events streams since the last `SLOWLOG RESET` answered: each one logged (every
    /// command is, at a threshold of 0) is run again on the unchanged streams and its answer counted.
    static func entriesRead(_ redis: RedisConnection) async throws -> Int {
        let logged = try await redis.send("SLOWLOG", "GET", "4096").array ?? []
        var total = 0
        for entry in logged {
            guard let arguments = entry.array?.dropFirst(3).first?.array?.compactMap(\.string),
                arguments.first?.uppercased() == "XRANGE", arguments.count >= 4, arguments[1].hasSuffix(":events")
            else { continue }
            let again = try await redis.send(
                RedisCommand("XRANGE", arguments: arguments.dropFirst().map { $0 as any RedisArgumentConvertible }))
            total += again.array?.count ?? 0
        }
        return total
    }

    /// This project's v2 event ids in the order the feed promises: by entry id, then partition.
    static func globalOrder(_ redis: RedisConnection) async throws -> [String] {
        var all: [(id: StreamID, partition: Int, event: String)] = []
        let keys = try Self.keys()
        for partition in keys.partitions {
            for entry in try await redis.xrange(keys.events(partition: partition).stream) {
                guard entry.string("project") == nil, entry.string("event.version") == "2",
                    let id = StreamID(entry.id), let event = entry.string("event.id")
                else { continue }
                all.append((id, partition.index, event))
            }
        }
        return all.sorted { ($0.id, $0.partition) < ($1.id, $1.partition) }.map(\.event)
    }
}
