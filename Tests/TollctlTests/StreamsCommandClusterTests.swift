import Foundation
import Pipeline
import Redis
import TestSupport
import Testing

/// `tollctl streams` and `tollctl dead` over every partition, the real binary against a real 6-node Redis Cluster
/// with 16 partitions. Serialized, like the other cluster suites.
@Suite("tollctl on Redis Cluster", .serialized)
struct StreamsCommandClusterTests {
    @Test func streamsAndDeadLettersOfEveryPartition() async throws {
        try await withRedisCluster { cluster in
            let redis = try RedisClusterClient(configuration: cluster.configuration(), logger: testLogger)
            defer { redis.close() }
            let keys = Keys(layout: try PartitionLayout(count: 16))
            let jobs9 = keys.jobs(partition: 9)
            _ = try await redis.xgroupCreate(jobs9.stream, group: "verifiers", startID: "0", makeStream: true)
            for index in 0..<2 { _ = try await redis.xadd(jobs9.stream, fields: [("job", Array("j\(index)".utf8))]) }
            let dead = try #require(
                try await redis.xadd(keys.jobs(partition: 13).deadLetter, fields: [(Job.Field.id, Array("dead-13".utf8))]))
            // An id of its own: two primaries stamping `*` in the same millisecond give the same id, and the redrive
            // below would then be (rightly) refused as ambiguous.
            _ = try await redis.xadd(keys.jobs(partition: 2).deadLetter, id: "1-1", fields: [(Job.Field.id, Array("dead-2".utf8))])
            let environment = ["TOLLGATE_REDIS_URL": cluster.url, "TOLLGATE_PARTITIONS": "16"]

            let json = try await ChildProcess.run("tollctl", arguments: ["streams", "--json"], environment: environment)
            #expect(json.status == 0, "\(json.output)")
            let report = try JSONDecoder().decode(StreamsCommandTests.Report.self, from: Data(json.output.utf8))
            #expect(report.streams.count == 16 * 3)
            let nine = try #require(report.streams.first { $0.partition == 9 && $0.name == "jobs" })
            #expect(nine.stream == jobs9.stream && nine.length == 2 && nine.groups.first?.lag == 2)
            #expect(report.streams.first { $0.partition == 13 && $0.name == "jobs" }?.deadLetters == 1)
            #expect(report.streams.filter { $0.deadLetters > 0 }.map(\.partition).sorted() == [2, 13])

            let list = try await ChildProcess.run("tollctl", arguments: ["dead", "list"], environment: environment)
            #expect(list.status == 0, "\(list.output)")
            #expect(list.output.contains("\(keys.jobs(partition: 13).deadLetter)  dead-letters=1"))
            #expect(list.output.contains("job=dead-13") && list.output.contains("job=dead-2"))

            // Redriven into the stream of its own partition.
            let redrive = try await ChildProcess.run("tollctl", arguments: ["dead", "redrive", dead], environment: environment)
            #expect(redrive.status == 0, "\(redrive.output)")
            #expect(redrive.output.contains("redriven=1"))
            #expect(try await redis.xrange(keys.jobs(partition: 13).stream).map { $0.string(Job.Field.id) } == ["dead-13"])
            #expect(try await redis.xlen(keys.jobs(partition: 13).deadLetter) == 0)
            #expect(try await redis.xlen(keys.jobs(partition: 2).deadLetter) == 1)
            let one = try await ChildProcess.run("tollctl", arguments: ["dead", "list", "--partition", "2"], environment: environment)
            #expect(one.output.contains("job=dead-2") && !one.output.contains("total"))
        }
    }
}
