import Foundation
import Hummingbird
import HummingbirdTesting
import Pipeline
import Redis
import TestSupport
import Testing

@testable import ingest

/// Each source's budget (issue 13, item 4): Apple's notifications and the clients' submissions are counted apart
/// (`tg:{p0}:backlog`), in jobs and in bytes, by the enqueue function itself; a finished job leaves its source's
/// budget in the same step as its acknowledgement; counters heal when the stage is idle.
@Suite struct BacklogMonitorTests {
    static func receiptBody(_ seed: Int, bytes: Int) -> ByteBuffer {
        let raw = [UInt8](repeating: UInt8(truncatingIfNeeded: seed), count: bytes * 3 / 4)
        return ByteBuffer(string: #"{"receipt":"\#(Data(raw).base64EncodedString())"}"#)
    }

    @Test func aFloodOfOneSourceNeverRefusesTheOther() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await IngestHarness.withApp(
                server,
                configure: {
                    $0.maxBacklog = 3
                    $0.maxReceiptBytes = 1 << 20
                    $0.backlogBytesClient = 2 << 20
                    $0.userMaxInFlight = 0
                }
            ) { client in
                // Apple's budget (3 jobs) fills; a client's submission is still taken.
                for index in 0..<3 {
                    let body = try IngestHarness.distinctNotificationBody("\(index)")
                    #expect(
                        try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: body)).status == .ok
                    )
                }
                let refused = try await client.execute(
                    uri: "/v1/apple/notifications", method: .post,
                    body: ByteBuffer(bytes: try IngestHarness.distinctNotificationBody("9")))
                #expect(refused.status == .serviceUnavailable)
                #expect(IngestHarness.errorCode(refused) == "overloaded")
                #expect(refused.headers[.retryAfter] == "1")
                let alice = try await IngestHarness.userHeaders("alice")
                let taken = try await client.execute(
                    uri: "/v1/receipts", method: .post, headers: alice,
                    body: Self.receiptBody(1, bytes: 900_000))
                #expect(taken.status == .accepted)
                // The clients' byte budget (2 MiB) refuses a third 900 KB receipt, whoever sends it.
                #expect(
                    try await client.execute(
                        uri: "/v1/receipts", method: .post, headers: alice,
                        body: Self.receiptBody(2, bytes: 900_000)
                    ).status == .accepted)
                let bob = try await IngestHarness.userHeaders("bob")
                let full = try await client.execute(
                    uri: "/v1/receipts", method: .post, headers: bob, body: Self.receiptBody(3, bytes: 900_000))
                #expect(full.status == .serviceUnavailable)
                #expect(IngestHarness.errorCode(full) == "overloaded")
                let held = try await redis.hgetall("tg:{p0}:backlog")
                #expect(held["apple.jobs"] == "3")
                #expect(held["client.jobs"] == "2")
                #expect(held["client.bytes"] == "1800000")
                #expect(try await redis.xlen("tg:{p0}:jobs") == 5)
            }
        }
    }

    /// The verifier's final acknowledgement takes the job off its source's counters (and a retry does not), so
    /// the source is accepted again; a job dead-lettered and redriven is counted again.
    @Test func aFinishedJobLeavesItsSourcesBudget() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await PipelineFunctions.library.load(on: redis)
            let keys = Keys(prefix: "tg")
            // The layout and data version first, as the first service on a new Redis records them: streams
            // without a record are older data, which services refuse (docs/UPGRADING.md).
            try await keys.checkLayout(on: redis)
            _ = try await redis.send(RedisCommand("XGROUP", "CREATE", "tg:{p0}:jobs", "verifiers", "0", "MKSTREAM"), timeout: nil)
            try await IngestHarness.withApp(
                server,
                configure: {
                    $0.maxBacklog = 1
                    $0.backlogSampleInterval = .seconds(3600)
                }
            ) { client in
                let first = try IngestHarness.distinctNotificationBody("1")
                let second = try IngestHarness.distinctNotificationBody("2")
                #expect(
                    try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: first)).status == .ok)
                #expect(
                    try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: second)).status
                        == .serviceUnavailable)

                let entry = try #require(
                    try await redis.xreadgroup(
                        group: "verifiers", consumer: "v", stream: "tg:{p0}:jobs",
                        id: ">", count: 1, block: nil
                    ).first)
                #expect(
                    try await PipelineFunctions.ackRetry(
                        on: redis, stream: keys.jobs(), group: "verifiers", id: entry.id, dueMilliseconds: 0, nextAttempt: 2,
                        error: "retry", writes: []))
                #expect(
                    try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: second)).status
                        == .serviceUnavailable)
                #expect(try await PipelineFunctions.promote(on: redis, stream: keys.jobs(), nowMilliseconds: Int64.max / 2, limit: 10) == 1)
                let retried = try #require(
                    try await redis.xreadgroup(
                        group: "verifiers", consumer: "v", stream: "tg:{p0}:jobs",
                        id: ">", count: 1, block: nil
                    ).first)
                #expect(
                    try await PipelineFunctions.ackWrite(
                        on: redis, stream: keys.jobs().stream, group: "verifiers", id: retried.id,
                        writes: Job.backlogRelease(of: retried, keys: keys)))
                // Acknowledged twice (a late duplicate completion): taken off once.
                #expect(
                    try await !PipelineFunctions.ackWrite(
                        on: redis, stream: keys.jobs().stream, group: "verifiers", id: retried.id,
                        writes: Job.backlogRelease(of: retried, keys: keys)))
                let held = try await redis.hgetall("tg:{p0}:backlog")
                #expect(held["apple.jobs"] == "0" && held["apple.bytes"] == "0", "\(held)")
                #expect(
                    try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: second)).status == .ok)
            }
        }
    }

    /// Counters that drifted (say an operator deleted entries by hand) are reset once nothing is unfinished;
    /// the check trusts delivered ids, not Redis 7.0's `lag`, which a restart overstates for good.
    @Test func countersHealWhenNothingIsUnfinished() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            for index in 0..<5 { _ = try await redis.xadd("tg:{p0}:jobs", fields: [("x", Array("\(index)".utf8))]) }
            _ = try await redis.send(RedisCommand("XGROUP", "CREATE", "tg:{p0}:jobs", "verifiers", "$"), timeout: nil)
            _ = try await redis.send(
                RedisCommand("XGROUP", "SETID", "tg:{p0}:jobs", "verifiers", "$", "ENTRIESREAD", 0), timeout: nil)
            let group = try #require(try await redis.xinfoGroups("tg:{p0}:jobs").first)
            #expect(group.lag == 5, "Redis reports a lag although every entry was delivered")
            _ = try await redis.send(RedisCommand("HSET", "tg:{p0}:backlog", "apple.jobs", 7, "apple.bytes", 1_000_000), timeout: nil)
            try await IngestFunctions.library.load(on: redis)
            #expect(try await IngestFunctions.settleBacklog(keys: Keys(prefix: "tg"), on: redis))
            #expect(try await redis.send("EXISTS", "tg:{p0}:backlog").int == 0)

            // With one undelivered entry, or one waiting for a retry, they stay.
            _ = try await redis.send(RedisCommand("HSET", "tg:{p0}:backlog", "apple.jobs", 1), timeout: nil)
            _ = try await redis.xadd("tg:{p0}:jobs", fields: [("x", Array("6".utf8))])
            #expect(try await !IngestFunctions.settleBacklog(keys: Keys(prefix: "tg"), on: redis))
            _ = try await redis.send(RedisCommand("XGROUP", "SETID", "tg:{p0}:jobs", "verifiers", "$"), timeout: nil)
            _ = try await redis.send(RedisCommand("ZADD", "tg:{p0}:jobs:retry", 1, "member"), timeout: nil)
            #expect(try await !IngestFunctions.settleBacklog(keys: Keys(prefix: "tg"), on: redis))
            _ = try await redis.send(RedisCommand("DEL", "tg:{p0}:jobs:retry"), timeout: nil)
            #expect(try await IngestFunctions.settleBacklog(keys: Keys(prefix: "tg"), on: redis))
        }
    }

    @Test func undeliveredIsBoundedByTheStreamAndZeroWhenCaughtUp() throws {
        let last = try #require(StreamID("1700000000000-4"))
        func group(_ delivered: String, lag: Int?) -> StreamGroupInfo {
            StreamGroupInfo(name: "verifiers", consumers: 1, pending: 0, lastDeliveredID: delivered, entriesRead: nil, lag: lag)
        }
        #expect(group("1700000000000-4", lag: 180_000).undelivered(streamLength: 40, lastEntry: last) == 0)
        #expect(group("1700000000000-2", lag: 180_000).undelivered(streamLength: 40, lastEntry: last) == 40)
        #expect(group("1700000000000-2", lag: 2).undelivered(streamLength: 40, lastEntry: last) == 2)
        #expect(group("0-0", lag: nil).undelivered(streamLength: 40, lastEntry: last) == 40)
        #expect(group("0-0", lag: 7).undelivered(streamLength: 0, lastEntry: nil) == 0)
    }
}
