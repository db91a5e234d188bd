import Pipeline
import Redis
import TestSupport
import Testing

/// A consumer over several partitions of one stream, with short times for tests.
func partitionConsumer(
    _ server: RedisServer, _ pool: RedisPool, streams: [PartitionStream], consumer: String = "C", concurrency: Int = 4,
    readCount: Int = 8, claimMinIdle: Duration = .seconds(60), maxDeliveries: Int = 5,
    retry: RetryPolicy = RetryPolicy(base: .milliseconds(20), cap: .milliseconds(40), maxAttempts: 5),
    deadLetterWrites: @escaping StreamConsumer.DeadLetterWrites = { _, _ in [] },
    handler: @escaping StreamConsumer.Handler
) -> StreamConsumer {
    StreamConsumer(
        configuration: StreamConsumerConfiguration(
            streams: streams, group: "workers", consumer: consumer, concurrency: concurrency, readCount: readCount,
            block: .milliseconds(100), claimMinIdle: claimMinIdle, claimInterval: .milliseconds(50),
            maxDeliveries: maxDeliveries, retry: retry, drainTimeout: .seconds(5)),
        redis: pool, readerConfiguration: server.configuration(), logger: testLogger,
        deadLetterWrites: deadLetterWrites, handler: handler)
}

/// Adds `count` entries `p=<partition>`, `n=<i>` to `stream`, pipelined.
func addEntries(_ pool: RedisPool, stream: String, partition: Partition, count: Int, from start: Int = 0) async throws {
    for chunk in stride(from: start, to: start + count, by: 500) {
        let commands = (chunk..<min(chunk + 500, start + count)).map {
            RedisCommand("XADD", stream, "*", "p", partition.description, "n", String($0))
        }
        _ = try await pool.pipeline(commands)
    }
}

/// Keys under the prefix `t` with `count` partitions.
func partitionedKeys(_ count: Int) throws -> Keys {
    Keys(prefix: "t", layout: try PartitionLayout(count: count))
}

@Suite struct StreamConsumerPartitionTests {
    @Test func everyPartitionIsHandledAndAcknowledgedInItsOwnPartition() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let keys = try partitionedKeys(4)
            for partition in keys.partitions {
                try await addEntries(pool, stream: keys.jobs(partition: partition).stream, partition: partition, count: 5)
            }
            let seen = Recorder<(partition: Partition, stream: String, field: String)>()
            let consumer = partitionConsumer(server, pool, streams: keys.partitionStreams("jobs")) { message in
                await seen.append((message.partition, message.stream, message.entry["p"]))
                let output = keys.verified(partition: message.partition).stream
                return .complete(writes: [.xadd(stream: output, strings: [("p", message.entry["p"])])])
            }
            let run = RunningServices([consumer])
            #expect(await eventually { await seen.count == 20 })
            try await run.shutdown()

            for item in await seen.values {
                #expect(item.partition.description == item.field)
                #expect(item.stream == keys.jobs(partition: item.partition).stream)
            }
            for partition in keys.partitions {
                let jobs = keys.jobs(partition: partition).stream
                // Acknowledged (and deleted) on the stream each came from; the hand-off in the same partition.
                #expect(try await pool.xpendingSummary(jobs, group: "workers").count == 0)
                #expect(try await pool.xlen(jobs) == 0)
                let verified = try await pool.xrange(keys.verified(partition: partition).stream)
                #expect(verified.map { $0["p"] } == Array(repeating: partition.description, count: 5))
            }
        }
    }

    /// Retries go to the retry set of the entry's partition and come back there; dead letters (given up, retries
    /// exhausted, poison) land in the dead-letter stream of the entry's partition.
    @Test func retriesAndDeadLettersStayInTheEntrysPartition() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let keys = try partitionedKeys(4)
            let streams = keys.partitionStreams("jobs")
            for partition in keys.partitions {
                try await addEntries(pool, stream: keys.jobs(partition: partition).stream, partition: partition, count: 1)
            }
            let attempts = Recorder<(partition: Partition, attempt: Int)>()
            // 0 completes; 1 fails until its retries run out; 2 gives up at once; 3 "crashes" until it is poison.
            let consumer = partitionConsumer(
                server, pool, streams: streams, claimMinIdle: .milliseconds(150), maxDeliveries: 2,
                retry: RetryPolicy(base: .milliseconds(20), cap: .milliseconds(40), maxAttempts: 2)
            ) { message in
                await attempts.append((message.partition, message.attempt))
                switch message.partition {
                case 0: return .complete
                case 1: return .retry(reason: "upstream down")
                case 2: return .deadLetter(reason: "malformed")
                default: return .abandon
                }
            }
            let promoter = RetryPromoter(streams: streams.map(\.keys), redis: pool, interval: .seconds(3600), logger: testLogger)
            let run = RunningServices([consumer])
            // The failed attempt waits in partition 1's retry set, and the promoter brings it back there.
            #expect(try await eventually { try await pool.send("ZCARD", keys.jobs(partition: 1).retry).int == 1 })
            for partition: Partition in [0, 2, 3] {
                #expect(try await pool.send("ZCARD", keys.jobs(partition: partition).retry).int == 0)
            }
            let moved = try await promoter.promoteDueEventually(keys.jobs(partition: 1).stream)
            #expect(moved == 1)
            for partition in (1...3).map({ Partition($0) }) {
                #expect(try await eventually { try await pool.xlen(keys.jobs(partition: partition).deadLetter) == 1 })
            }
            try await run.shutdown()

            #expect(try await pool.xlen(keys.jobs(partition: 0).deadLetter) == 0)
            let reasons = ["", "retries exhausted", "malformed", "poison"]
            for partition in (1...3).map({ Partition($0) }) {
                let dead = try #require(try await pool.xrange(keys.jobs(partition: partition).deadLetter).first)
                #expect(dead["p"] == partition.description)
                #expect(dead["source.stream"] == keys.jobs(partition: partition).stream)
                #expect(dead["reason"].contains(reasons[partition.index]))
            }
            let history = await attempts.values
            #expect(history.filter { $0.partition == 1 }.map(\.attempt) == [1, 2])
            #expect(history.filter { $0.partition == 3 }.count == 2)  // delivered twice, then poison without a call
            for partition in keys.partitions {
                #expect(try await pool.xpendingSummary(keys.jobs(partition: partition).stream, group: "workers").count == 0)
                #expect(try await pool.send("ZCARD", keys.jobs(partition: partition).retry).int == 0)
            }
        }
    }

    /// A restarted consumer re-reads its own pending entries in every partition first (no min-idle wait), each as
    /// its second delivery, and acknowledges each in its own partition.
    @Test func ownPendingEntriesOfEveryPartitionAreReReadAtStart() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let keys = try partitionedKeys(4)
            // A previous run of "C" took one entry in partitions 1 and 3 and died.
            for partition: Partition in [1, 3] {
                let stream = keys.jobs(partition: partition).stream
                _ = try await pool.xgroupCreate(stream, group: "workers", startID: "0", makeStream: true)
                try await addEntries(pool, stream: stream, partition: partition, count: 1)
                _ = try await pool.xreadgroup(group: "workers", consumer: "C", stream: stream, count: 1, block: nil)
            }
            let seen = Recorder<(partition: Partition, deliveries: Int)>()
            let consumer = partitionConsumer(server, pool, streams: keys.partitionStreams("jobs")) { message in
                await seen.append((message.partition, message.deliveryCount))
                return .complete
            }
            let run = RunningServices([consumer])
            #expect(await eventually(timeout: .seconds(10)) { await seen.count == 2 })
            try await run.shutdown()
            #expect(await seen.values.map(\.partition).sorted() == [1, 3])
            #expect(await seen.values.allSatisfy { $0.deliveries == 2 })
            for partition: Partition in [1, 3] {
                #expect(try await pool.xpendingSummary(keys.jobs(partition: partition).stream, group: "workers").count == 0)
            }
        }
    }

    /// Thousands of entries in one partition, one in another: the cold entry starts within the first batches, and
    /// one added while the hot partition is being worked off starts within about one batch of the hot reader.
    @Test func aHotPartitionDoesNotStarveAColdOne() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let keys = try partitionedKeys(2)
            try await addEntries(pool, stream: keys.jobs(partition: 0).stream, partition: 0, count: 3000)
            try await addEntries(pool, stream: keys.jobs(partition: 1).stream, partition: 1, count: 1)
            let order = Recorder<String>()
            let gauge = ConcurrencyGauge()
            let consumer = partitionConsumer(
                server, pool, streams: keys.partitionStreams("jobs"), concurrency: 4, readCount: 8
            ) { message in
                await gauge.enter()
                await order.append("\(message.partition):\(message.entry["n"])")
                try await Task.sleep(for: .milliseconds(1))
                await gauge.leave()
                return .complete
            }
            let run = RunningServices([consumer])
            #expect(await eventually(timeout: .seconds(60)) { await order.count >= 300 })
            try await addEntries(pool, stream: keys.jobs(partition: 1).stream, partition: 1, count: 1, from: 1)
            let before = await order.count
            #expect(try await eventually { try await pool.xlen(keys.jobs(partition: 0).stream) == 0 })
            try await run.shutdown()

            let handled = await order.values
            let first = try #require(handled.firstIndex(of: "1:0"))
            let second = try #require(handled.firstIndex(of: "1:1"))
            #expect(first < 16, "the cold entry started after \(first) hot ones")
            // Behind at most what was queued when it arrived: the hot reader's batch and the running handlers.
            #expect(second - before < 16, "the second cold entry started \(second - before) entries after it was added")
            #expect(handled.count == 3002)
            // Both readers share the one bound.
            #expect(await gauge.highest == 4)
        }
    }
}

extension RetryPromoter {
    /// Promotes until something due on `stream` moved (the retry's delay has to pass first); how many moved.
    func promoteDueEventually(_ stream: String) async throws -> Int {
        let moved = try await eventuallyValue { () async throws -> Int? in
            let count = try await self.promoteDue()[stream] ?? 0
            return count > 0 ? count : nil
        }
        return moved ?? 0
    }
}
