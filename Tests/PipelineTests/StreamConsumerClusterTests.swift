import Pipeline
import Redis
import TestSupport
import Testing

/// The consumer runtime on a real 6-node Redis Cluster with 16 partitions. Serialized, like the other cluster
/// suites.
@Suite("Stream consumer on Redis Cluster", .serialized)
struct StreamConsumerClusterTests {
    @Test func sixteenPartitionsAreAllHandledWithOneReaderOnEachPartitionsPrimary() async throws {
        try await withRedisCluster { cluster in
            let client = try await cluster.connectedClient()
            defer { client.close() }
            try await PipelineFunctions.library.load(on: client)
            let keys = try partitionedKeys(16)
            for partition in keys.partitions {
                let stream = keys.jobs(partition: partition).stream
                _ = try await client.pipeline(
                    (0..<5).map { RedisCommand("XADD", stream, "*", "p", partition.description, "n", String($0)) })
            }
            let seen = Recorder<(partition: Partition, stream: String, field: String)>()
            let gate = Gate()
            let consumer = StreamConsumer(
                configuration: StreamConsumerConfiguration(
                    streams: keys.partitionStreams("jobs"), group: "workers", consumer: "C16", concurrency: 8,
                    readCount: 4, block: .milliseconds(200), claimInterval: .milliseconds(100)),
                redis: client, logger: testLogger
            ) { message in
                await seen.append((message.partition, message.stream, message.entry["p"]))
                if message.partition == 15 && message.entry["n"] == "9" { await gate.wait() }
                let output = keys.verified(partition: message.partition).stream
                return .complete(writes: [.xadd(stream: output, strings: [("p", message.entry["p"])])])
            }
            let run = RunningServices([consumer])
            #expect(await eventually { await seen.count == 80 })

            // One reader per partition, each connected to the primary that serves its partition's slot.
            let map = client.slotMap
            for primary in map.allPrimaries {
                let expected = keys.partitions.filter { map.primaries[ClusterKeySlot.slot(keys.tag(partition: $0))] == primary }
                let readers = try #require(
                    try await eventuallyValue { () async throws -> Int? in
                        let count = try await readerConnections(cluster, port: primary.port, name: "C16-reader")
                        return count == expected.count ? count : nil
                    })
                #expect(readers == expected.count)
                #expect(!expected.isEmpty)
            }

            // A new entry in the last partition, added while all readers block, reaches its handler.
            _ = try await client.xadd(keys.jobs(partition: 15).stream, fields: [("p", Array("15".utf8)), ("n", Array("9".utf8))])
            #expect(await eventually { await seen.count == 81 })
            #expect(try await client.xpendingSummary(keys.jobs(partition: 15).stream, group: "workers").count == 1)
            await gate.open()
            #expect(try await eventually { try await client.xlen(keys.verified(partition: 15).stream) == 6 })
            try await run.shutdown()

            for item in await seen.values {
                #expect(item.partition.description == item.field)
                #expect(item.stream == keys.jobs(partition: item.partition).stream)
            }
            for partition in keys.partitions {
                let jobs = keys.jobs(partition: partition).stream
                #expect(try await client.xpendingSummary(jobs, group: "workers").count == 0, "partition \(partition)")
                #expect(try await client.xlen(jobs) == 0)
                let verified = try await client.xrange(keys.verified(partition: partition).stream)
                #expect(verified.map { $0["p"] } == Array(repeating: partition.description, count: partition == 15 ? 6 : 5))
            }
        }
    }
}

extension StreamConsumerClusterTests {
    /// A primary dies: the readers of its partitions follow the promoted replica, and entries added there after the
    /// failover are handled like the others, none left pending.
    @Test func readersFollowAFailoverOfTheirPartitionsPrimary() async throws {
        try await withRedisCluster(nodeTimeout: 1000) { cluster in
            let client = try await cluster.connectedClient()
            defer { client.close() }
            try await PipelineFunctions.library.load(on: client)
            let keys = try partitionedKeys(16)
            let handled = Recorder<Partition>()
            let consumer = StreamConsumer(
                configuration: StreamConsumerConfiguration(
                    streams: keys.partitionStreams("jobs"), group: "workers", consumer: "F", concurrency: 8,
                    readCount: 4, block: .milliseconds(200), claimInterval: .milliseconds(100)),
                redis: client, logger: testLogger
            ) { message in
                await handled.append(message.partition)
                return .complete(writes: [.xadd(stream: keys.verified(partition: message.partition).stream, strings: [("n", "1")])])
            }
            let run = RunningServices([consumer])
            for partition in keys.partitions {
                _ = try await client.xadd(keys.jobs(partition: partition).stream, fields: [("p", Array("\(partition)".utf8))])
            }
            #expect(await eventually { await handled.count == 16 })

            // The primary of partition 0 and the partitions it serves; its replica has every ack before it dies.
            let map = client.slotMap
            let victim = try #require(map.primaries[ClusterKeySlot.slot(keys.tag(partition: 0))])
            let replica = try #require(map.replicas[victim]?.first)
            let served = keys.partitions.filter { map.primaries[ClusterKeySlot.slot(keys.tag(partition: $0))] == victim }
            let probe = cluster.connection(to: replica.port)
            defer { probe.close() }
            let replicated = try await eventually(timeout: .seconds(10)) {
                for partition in served {
                    let replies = try await probe.pipeline([
                        RedisCommand("READONLY"), RedisCommand("XLEN", keys.verified(partition: partition).stream),
                    ])
                    if replies.last?.int != 1 { return false }
                }
                return true
            }
            try #require(replicated)
            await cluster.kill(port: victim.port)

            // A client of its own adds the next entries (the consumer's connections to the dead node are broken).
            let writer = try RedisClusterClient(configuration: cluster.configuration(), logger: testLogger)
            defer { writer.close() }
            for partition in keys.partitions {
                _ = try await writer.xadd(keys.jobs(partition: partition).stream, fields: [("p", Array("\(partition)".utf8))])
            }
            #expect(await eventually(timeout: .seconds(30)) { await handled.count >= 32 })
            try await run.shutdown()

            for partition in keys.partitions {
                #expect(try await writer.xlen(keys.verified(partition: partition).stream) == 2, "partition \(partition)")
                #expect(try await writer.xpendingSummary(keys.jobs(partition: partition).stream, group: "workers").count == 0)
            }
            #expect(!served.isEmpty)
            #expect(writer.slotMap.primaries[ClusterKeySlot.slot(keys.tag(partition: 0))] == replica)
        }
    }
}

extension StreamConsumerClusterTests {
    /// The retry promoter and the janitor over 16 partitions on the cluster: each partition's due retry goes back onto
    /// its own stream, and each partition's acknowledged entries are trimmed, pending ones kept.
    @Test func promoterAndJanitorWorkEveryPartition() async throws {
        try await withRedisCluster { cluster in
            let client = try await cluster.connectedClient()
            defer { client.close() }
            try await PipelineFunctions.library.load(on: client)
            let keys = try partitionedKeys(16)
            let streams = keys.partitionStreams("jobs").map(\.keys)
            for (partition, stream) in streams.enumerated() {
                _ = try await client.xgroupCreate(stream.stream, group: "g", startID: "0", makeStream: true)
                var ids: [String] = []
                for n in 0..<3 {
                    ids.append(try #require(try await client.xadd(stream.stream, fields: [("n", Array("\(n)".utf8))])))
                }
                _ = try await client.xreadgroup(group: "g", consumer: "c", stream: stream.stream, count: 3, block: nil)
                #expect(try await client.xack(stream.stream, group: "g", ids: [ids[0]]) == 1)
                // Entry 1 retried (due long ago), entry 2 left pending.
                let retried = try await PipelineFunctions.ackRetry(
                    on: client, stream: stream, group: "g", id: ids[1], dueMilliseconds: 1, nextAttempt: 2, error: "p\(partition)")
                #expect(retried)
            }
            let promoter = RetryPromoter(streams: streams, redis: client, logger: testLogger)
            let moved = try await promoter.promoteDue()
            #expect(moved == Dictionary(uniqueKeysWithValues: streams.map { ($0.stream, 1) }))
            let janitor = StreamJanitor(streams: streams, redis: client, logger: testLogger)
            let trimmed = try await janitor.trimOnce()
            for stream in streams {
                // The acknowledged entry goes; the pending one and the promoted retry stay.
                #expect(trimmed[stream.stream] == 1, "\(stream)")
                let left = try await client.xrange(stream.stream)
                #expect(left.count == 2)
                #expect(left.last?.string(PipelineFunctions.attemptField) == "2")
                #expect(try await client.send("ZCARD", stream.retry).int == 0)
            }
        }
    }
}

/// How many clients named `name` the node at `port` has.
func readerConnections(_ cluster: RedisCluster, port: Int, name: String) async throws -> Int {
    let list = try await cluster.send(to: port, "CLIENT", "LIST").string ?? ""
    return list.split(whereSeparator: \.isNewline).filter { $0.contains(" name=\(name) ") }.count
}
