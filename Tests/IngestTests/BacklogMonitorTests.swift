import Foundation
import Hummingbird
import HummingbirdTesting
import Pipeline
import Redis
import Testing
import TestSupport

@testable import ingest

/// The backlog behind `503 overloaded`. Redis 7.0 does not carry a consumer group's `entries-read` through
/// the AOF or to replicas, so after a restart or failover `XINFO GROUPS` overstates `lag` for good (found by
/// `scripts/chaos`); `XGROUP SETID … ENTRIESREAD 0` puts a group in that state without a restart.
@Suite struct BacklogMonitorTests {
    @Test func aCaughtUpGroupWhoseLagRedisOverstatesDoesNotBlockEnqueues() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            for index in 0..<5 { _ = try await redis.xadd("tg:{p0}:jobs", fields: [("x", Array("\(index)".utf8))]) }
            _ = try await redis.send(RedisCommand("XGROUP", "CREATE", "tg:{p0}:jobs", "verifiers", "$"), timeout: nil)
            _ = try await redis.send(
                RedisCommand("XGROUP", "SETID", "tg:{p0}:jobs", "verifiers", "$", "ENTRIESREAD", 0), timeout: nil)
            let group = try #require(try await redis.xinfoGroups("tg:{p0}:jobs").first)
            #expect(group.lag == 5, "Redis reports a lag although every entry was delivered")

            try await IngestHarness.withApp(server, configure: { $0.maxBacklog = 3 }) { client in
                let response = try await client.execute(uri: "/v1/apple/notifications", method: .post,
                                                        body: ByteBuffer(bytes: try IngestHarness.notificationBody()))
                #expect(response.status == .ok)
                #expect(try await redis.xlen("tg:{p0}:jobs") == 6)
            }
        }
    }

    @Test func undeliveredEntriesStillCount() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            for index in 0..<5 { _ = try await redis.xadd("tg:{p0}:jobs", fields: [("x", Array("\(index)".utf8))]) }
            _ = try await redis.send(RedisCommand("XGROUP", "CREATE", "tg:{p0}:jobs", "verifiers", "0"), timeout: nil)
            try await IngestHarness.withApp(server, configure: { $0.maxBacklog = 3 }) { client in
                let response = try await client.execute(uri: "/v1/apple/notifications", method: .post,
                                                        body: ByteBuffer(bytes: try IngestHarness.notificationBody()))
                #expect(response.status == .serviceUnavailable)
                #expect(IngestHarness.errorCode(response) == "overloaded")
            }
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
