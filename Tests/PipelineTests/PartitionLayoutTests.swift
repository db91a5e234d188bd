import Pipeline
import Redis
import TestSupport
import Testing

@Suite struct PartitionLayoutTests {
    @Test func oneTagPerPartitionInItsShareOfTheSlots() throws {
        #expect(PartitionLayout.single.tags == ["{p0}"])
        let sixteen = try PartitionLayout(count: 16)
        // docs/CLUSTER.md §2's table; ClusterKeySlot is checked against CLUSTER KEYSLOT.
        #expect(Array(sixteen.tags.prefix(4)) == ["{p0.41}", "{p1.42}", "{p2.3}", "{p3}"])
        #expect(sixteen.tags[15] == "{p15.11}")
        #expect([907, 1372, 2665, 3689, 16030] == ["{p0.41}", "{p1.42}", "{p2.3}", "{p3}", "{p15.11}"].map(ClusterKeySlot.slot))
        for count in [2, 3, 16, 64, 1024] {
            let layout = try PartitionLayout(count: count)
            #expect(Set(layout.tags).count == count)
            for (partition, tag) in layout.tags.enumerated() {
                #expect(PartitionLayout.slotRange(partition: partition, of: count).contains(ClusterKeySlot.slot(tag)), "\(tag) of \(count)")
            }
        }
        // The three slot ranges `redis-cli --cluster create` makes for three primaries get 5, 5 and 6 partitions.
        let ranges = [0...5460, 5461...10922, 10923...16383]
        let perPrimary = ranges.map { range in sixteen.tags.filter { range.contains(ClusterKeySlot.slot($0)) }.count }
        #expect(perPrimary.sorted() == [5, 5, 6])
        #expect(throws: PipelineError.self) { try PartitionLayout(count: 0) }
        #expect(throws: PipelineError.self) { try PartitionLayout(count: 1025) }
    }

    @Test func theFirstProcessRecordsTheLayoutAndOthersMustAgree() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            let sixteen = Keys(prefix: "tg", layout: try PartitionLayout(count: 16))
            try await sixteen.checkLayout(on: redis)
            try await sixteen.checkLayout(on: redis)
            #expect(try await sixteen.recordedPartitions(on: redis) == 16)
            await #expect(throws: PipelineError.layoutMismatch(configured: 1, recorded: 16)) { try await Keys().checkLayout(on: redis) }

            // Layout-1 data written before any record: a 16-partition process refuses it, a 1-partition one records 1
            // and refuses the data as older data, until `tollctl upgrade` (DataUpgradeTests).
            let legacy = Keys(prefix: "old")
            _ = try await redis.xadd(legacy.jobs().stream, fields: [("job", Array("j".utf8))])
            let old16 = Keys(prefix: "old", layout: try PartitionLayout(count: 16))
            await #expect(throws: PipelineError.layoutMismatch(configured: 16, recorded: 1)) { try await old16.checkLayout(on: redis) }
            #expect(try await old16.recordedPartitions(on: redis) == nil)
            await #expect(throws: PipelineError.dataUpgradeRequired(stored: 0, current: StoredData.version)) {
                try await legacy.checkLayout(on: redis)
            }
            #expect(try await legacy.recordedPartitions(on: redis) == 1)
            #expect(try await legacy.storedDataVersion(on: redis) == nil)
        }
    }
}
