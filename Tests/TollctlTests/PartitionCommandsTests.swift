import Core
import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// tollctl with 16 partitions (`TOLLGATE_PARTITIONS=16`): `job` finds a job from its id and follows `moved.to`;
/// `streams` and `dead list/redrive` cover every partition unless `--partition` picks one; `user` reads the
/// partitioned ledger keys; a layout other than the recorded one is refused. The real binary against a real Redis.
@Suite struct PartitionCommandsTests {
    static func keys() throws -> Keys { Keys(prefix: "tg", layout: try PartitionLayout(count: 16)) }

    static func withRedis(_ body: (RedisConnection, [String: String]) async throws -> Void) async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            try await body(redis, ["TOLLGATE_REDIS_URL": server.url, "TOLLGATE_PARTITIONS": "16"])
        }
    }

    @Test func jobFindsTheIDsPartitionAndFollowsMovedTo() async throws {
        let keys = try Self.keys()
        try await Self.withRedis { redis, environment in
            let id = keys.newJobID(partition: 5)
            _ = try await redis.send("HSET", keys.job(id, partition: 5), "state", "verifying", "kind", "transaction", "moved.to", "9")
            _ = try await redis.send("HSET", keys.job(id, partition: 9), "state", "fulfilled", "result", #"{"credited":1}"#)
            let found = try await ChildProcess.run("tollctl", arguments: ["job", id], environment: environment)
            #expect(found.status == 0, "\(found.output)")
            #expect(found.output.contains("state=fulfilled"))
            #expect(found.output.contains("key=\(keys.job(id, partition: 9))"))
            #expect(found.output.contains("moved.from=\(keys.job(id, partition: 5))"))
            let home = try await ChildProcess.run("tollctl", arguments: ["job", id, "--partition", "5"], environment: environment)
            #expect(home.output.contains("state=verifying") && home.output.contains("moved.to=9"))

            let forged = "ffff" + String(id.dropFirst(4))
            _ = try await redis.send("HSET", keys.partitionKey(0, "job", forged), "state", "fulfilled")
            let missing = try await ChildProcess.run("tollctl", arguments: ["job", forged], environment: environment)
            #expect(missing.status == 1)
            #expect(missing.output.contains("tollctl: error: job_not_found: no status for job \(forged)"))
        }
    }

    @Test func streamsCoverEveryPartitionUnlessOneIsPicked() async throws {
        let keys = try Self.keys()
        try await Self.withRedis { redis, environment in
            _ = try await redis.xadd(keys.jobs(partition: 7).stream, fields: [("job", Array("j".utf8))])
            let all = try await ChildProcess.run("tollctl", arguments: ["streams", "--json"], environment: environment)
            #expect(all.status == 0, "\(all.output)")
            let streams = try #require(JSONValue.read(all.output.utf8)?["streams"]?.array)
            #expect(streams.count == 16 * Keys.knownStreams.count)
            let seventh = streams.filter { $0["stream"]?.string == keys.jobs(partition: 7).stream }
            #expect(seventh.count == 1 && seventh.first?["length"]?.int == 1 && seventh.first?["partition"]?.int == 7)
            let one = try await ChildProcess.run("tollctl", arguments: ["streams", "--partition", "7"], environment: environment)
            #expect(one.output.contains("\(keys.jobs(partition: 7).stream)  length=1"))
            #expect(!one.output.contains(keys.jobs(partition: 0).stream))
            let outside = try await ChildProcess.run("tollctl", arguments: ["streams", "--partition", "16"], environment: environment)
            #expect(outside.status == 1 && outside.output.contains("invalid_partition"))
        }
    }

    @Test func deadLettersOfEveryPartitionAreListedAndRedrivenInTheirOwn() async throws {
        let keys = try Self.keys()
        try await Self.withRedis { redis, environment in
            var ids: [Partition: (job: String, dead: String)] = [:]
            for partition: Partition in [3, 11] {
                let job = keys.newJobID(partition: partition)
                let stream = keys.jobs(partition: partition)
                // The same entry id in both partitions: stream ids are per stream.
                let dead = try await redis.send(
                    "XADD", stream.deadLetter, "5-1", "job.id", job, "job.kind", "receipt", "source.stream", stream.stream,
                    "reason", "poison", "attempts", "5"
                ).string
                ids[partition] = (job, try #require(dead))
                _ = try await redis.send("HSET", keys.job(job, partition: partition), "state", "dead")
            }
            let list = try await ChildProcess.run("tollctl", arguments: ["dead", "list"], environment: environment)
            #expect(list.status == 0, "\(list.output)")
            for partition: Partition in [3, 11] {
                #expect(list.output.contains("\(keys.jobs(partition: partition).deadLetter)  dead-letters=1"))
                #expect(list.output.contains("job=\(try #require(ids[partition]).job)"))
            }
            #expect(!list.output.contains(keys.jobs(partition: 0).deadLetter))

            let ambiguous = try await ChildProcess.run("tollctl", arguments: ["dead", "redrive", "5-1"], environment: environment)
            #expect(ambiguous.status == 1 && ambiguous.output.contains("ambiguous"))
            let one = try await ChildProcess.run(
                "tollctl", arguments: ["dead", "redrive", "5-1", "--partition", "11"], environment: environment)
            #expect(one.output.contains("redriven=1"), "\(one.output)")
            #expect(try await redis.xlen(keys.jobs(partition: 11).stream) == 1)
            #expect(try await redis.send("HGET", keys.job(try #require(ids[11]).job, partition: 11), "state").string == "queued")
            let rest = try await ChildProcess.run("tollctl", arguments: ["dead", "redrive", "--all"], environment: environment)
            #expect(rest.output.contains("redriven=1"), "\(rest.output)")
            #expect(try await redis.xlen(keys.jobs(partition: 3).stream) == 1)
            #expect(try await redis.xlen(keys.jobs(partition: 3).deadLetter) == 0)
            #expect(try await redis.send("HGET", keys.job(try #require(ids[3]).job, partition: 3), "state").string == "queued")
        }
    }

    @Test func userReadsThePartitionedLedgerAndAnotherLayoutIsRefused() async throws {
        let keys = try Self.keys()
        try await Self.withRedis { redis, environment in
            let user = try #require((0..<100).map { "cli-\($0)" }.first { keys.partition(ofUser: $0) != 0 })
            _ = try await redis.send("HSET", keys.account(user: user), "coins", "42")
            #expect(keys.account(user: user).hasPrefix("tg:\(keys.tag(partition: keys.partition(ofUser: user))):u:"))
            let shown = try await ChildProcess.run("tollctl", arguments: ["user", user], environment: environment)
            #expect(shown.status == 0, "\(shown.output)")
            #expect(shown.output.contains(#""coins":42"#))

            _ = try await redis.send("HSET", keys.layoutRecord, "partitions", "16", "version", "2")
            var single = environment
            single["TOLLGATE_PARTITIONS"] = nil
            let refused = try await ChildProcess.run("tollctl", arguments: ["streams"], environment: single)
            #expect(refused.status == 1)
            #expect(refused.output.contains("layout_mismatch"))
        }
    }
}
