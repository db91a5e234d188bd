import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// `tollctl layout`, the real binary against a real Redis holding layout-1 keys written by hand.
@Suite struct LayoutCommandTests {
    @Test func repartitionMovesAUsersKeysAndRefusesUnfinishedWork() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            _ = try await redis.send("HSET", "tg:{u:alice}:account", "coins", 100)
            _ = try await redis.send("SET", "tg:{otx:1000}:owner", "alice")
            let jobs = Keys().jobs()
            _ = try await redis.xgroupCreate(jobs.stream, group: "verifiers", startID: "0", makeStream: true)
            let entry = try #require(try await redis.xadd(jobs.stream, fields: [("job", Array("j1".utf8))]))
            let environment = ["TOLLGATE_REDIS_URL": server.url]

            let refused = try await ChildProcess.run(
                "tollctl", arguments: ["layout", "repartition", "--partitions", "16"], environment: environment)
            #expect(refused.status == 1)
            #expect(
                refused.output.contains(
                    "tollctl: error: repartition_refused: cannot repartition: tg:{p0}:jobs group verifiers has 0 pending and 1 undelivered")
            )
            _ = try await redis.send("XDEL", jobs.stream, entry)

            let moved = try await ChildProcess.run(
                "tollctl", arguments: ["layout", "repartition", "--partitions", "16"], environment: environment)
            #expect(moved.status == 0, "\(moved.output)")
            #expect(moved.output.contains("partitions=16 userKeys=1 chainKeys=1 sweepEntries=0"))
            let keys = Keys(prefix: "tg", layout: try PartitionLayout(count: 16))
            #expect(try await redis.send("HGET", keys.account(user: "alice"), "coins").string == "100")
            #expect(try await redis.send("GET", keys.binding(originalTransactionId: "1000")).string == "alice")

            let shown = try await ChildProcess.run(
                "tollctl", arguments: ["layout", "show"], environment: environment.merging(["TOLLGATE_PARTITIONS": "16"]) { $1 })
            #expect(shown.output.contains("recorded=16 configured=16"))
            #expect(
                shown.output.contains("partition=0  tag=\(keys.tag(partition: 0))  slot=\(ClusterKeySlot.slot(keys.tag(partition: 0)))"))
            let again = try await ChildProcess.run(
                "tollctl", arguments: ["layout", "repartition", "--partitions", "16"], environment: environment)
            #expect(again.output.contains("already laid out in 16 partitions"))
            let other = try await ChildProcess.run(
                "tollctl", arguments: ["layout", "repartition", "--partitions", "8"], environment: environment)
            #expect(other.status == 1 && other.output.contains("laid out in 16 partitions, not 1"))
        }
    }
}
