import Foundation
import Pipeline
import Redis
import TestSupport
import Testing

/// Job ids name the partition their job starts in, and a job's status is found from its id alone (docs/CLUSTER.md
/// §3 "Who decides the partition" and §6; ``Keys/locateJob(_:on:)``).
@Suite struct JobIDTests {
    static func sixteen() throws -> Keys { Keys(prefix: "tg", layout: try PartitionLayout(count: 16)) }

    @Test func oneSingleLayoutKeepsRandomUUIDsAndEveryIDIsPartitionZero() {
        let keys = Keys()
        let ids = (0..<200).map { _ in keys.newJobID(partition: 0) }
        #expect(Set(ids).count == ids.count)
        // Version 4 UUIDs as before: the 13th hex digit is 4, the first digits random.
        #expect(ids.allSatisfy { Array($0.utf8)[12] == UInt8(ascii: "4") && Keys.isJobIDShaped($0) })
        #expect(Set(ids.map { $0.prefix(2) }).count > 20)
        #expect(ids.allSatisfy { keys.partition(ofJob: $0) == 0 })
        #expect(keys.partition(ofJob: "ffff" + String(repeating: "0", count: 28)) == 0)
        #expect(keys.job(ids[0]) == "tg:{p0}:job:\(ids[0])")
        for bad in ["", "jobL", String(repeating: "A", count: 32), String(repeating: "0", count: 31), String(repeating: "g", count: 32)] {
            #expect(keys.partition(ofJob: bad) == nil, "\(bad)")
        }
    }

    @Test func manyPartitionsPutThePartitionInTheFirstFourDigits() throws {
        let keys = try Self.sixteen()
        for partition in keys.partitions {
            let id = keys.newJobID(partition: partition)
            #expect(Keys.isJobIDShaped(id))
            #expect(id.hasPrefix(String(format: "%04x", partition.index)))
            #expect(keys.partition(ofJob: id) == partition)
            #expect(keys.job(id) == keys.job(id, partition: partition))
            #expect(keys.job(id).hasPrefix("tg:\(keys.tag(partition: partition)):job:"))
        }
        // Beyond the layout: no partition, whatever the rest of the id.
        #expect(keys.partition(ofJob: "0010" + String(repeating: "a", count: 28)) == nil)
        #expect(keys.partition(ofJob: "ffff" + String(repeating: "a", count: 28)) == nil)
        let widest = Keys(layout: try PartitionLayout(count: PartitionLayout.maximum))
        let last = widest.newJobID(partition: Partition(PartitionLayout.maximum - 1))
        #expect(last.hasPrefix("03ff") && widest.partition(ofJob: last) == Partition(PartitionLayout.maximum - 1))
    }

    @Test func aNotificationStartsInItsChainsPartitionElseItsUUIDs() throws {
        let keys = try Self.sixteen()
        #expect(keys.partition(ofNotification: "1000000123", uuid: "u-1") == keys.partition(ofOriginalTransaction: "1000000123"))
        #expect(keys.partition(ofNotification: nil, uuid: "ABC-def") == keys.router.partition(hashing: "abc-def"))
        #expect(keys.partition(ofNotification: "", uuid: "abc-def") == keys.router.partition(hashing: "abc-def"))
        #expect(keys.partition(ofNotification: nil, uuid: nil) == nil)
        #expect(Keys().partition(ofNotification: "1000000123", uuid: nil) == 0)
    }

    @Test func aStatusIsWrittenInTheIDsPartitionUnlessTold() throws {
        let keys = try Self.sixteen()
        let status = JobStatus(jobID: keys.newJobID(partition: 6), state: .fulfilled, updatedAtMilliseconds: 1)
        func key(_ write: PipelineWrite) -> String? {
            if case .status(let key, _, _, _, _, _) = write { return key }
            return nil
        }
        #expect(key(status.write(keys: keys)) == keys.job(status.jobID, partition: 6))
        #expect(key(status.write(keys: keys, partition: 13)) == keys.job(status.jobID, partition: 13))
        #expect(key(JobStatus(jobID: "job1", state: .queued, updatedAtMilliseconds: 1).write(keys: Keys())) == "tg:{p0}:job:job1")
    }

    @Test func aFinishedJobLeavesTheBacklogOfItsIDsPartition() throws {
        let keys = try Self.sixteen()
        let id = keys.newJobID(partition: 7)
        let entry = StreamEntry(
            id: "1-1",
            fields: [Job.Field.id: Array(id.utf8), Job.Field.source: Array("apple".utf8), Job.Field.bytes: Array("300".utf8)])
        let writes = Job.backlogRelease(of: entry, keys: keys)
        let counters = writes.compactMap { write -> String? in
            if case .hincrby(let key, _, _) = write { return key }
            return nil
        }
        #expect(counters == [keys.backlog(partition: 7), keys.backlog(partition: 7)])
    }

    @Test func aJobIsFoundFromItsIDFollowingItsMovedToChain() async throws {
        let keys = try Self.sixteen()
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            let id = keys.newJobID(partition: 2)
            #expect(try await keys.locateJob(id, on: redis) == nil)
            _ = try await redis.send(
                "HSET", keys.job(id, partition: 2), "state", "verifying", "user", "u-1", JobStatus.movedToField, "12")
            // Moved, but the owner's partition has nothing yet: the home status.
            #expect(try await keys.readJobStatus(id, on: redis)?.state == .verifying)
            _ = try await redis.send("HSET", keys.job(id, partition: 12), "state", "fulfilled", JobStatus.movedToField, "2")
            let found = try #require(try await keys.locateJob(id, on: redis))
            #expect(found.key == keys.job(id, partition: 12))
            #expect(found.movedFrom == keys.job(id, partition: 2))
            #expect(found.status(jobID: id)?.state == .fulfilled)
            // The owner's hash does not repeat who submitted the job: the home hash's word stands.
            #expect(found.status(jobID: id)?.userID == "u-1")
            // A pointer back to a hash already read (here the home one) ends the walk instead of looping.
            #expect(try await keys.locateJob(id, on: redis)?.key == keys.job(id, partition: 12))
            // Moved again (its chain's partition first, then its owner's): the walk goes to the end of the chain.
            _ = try await redis.send("HSET", keys.job(id, partition: 12), "state", "verifying", JobStatus.movedToField, "5")
            _ = try await redis.send("HSET", keys.job(id, partition: 5), "state", "fulfilled")
            let twice = try #require(try await keys.locateJob(id, on: redis))
            #expect(twice.key == keys.job(id, partition: 5))
            #expect(twice.movedFrom == keys.job(id, partition: 2))
            #expect(twice.status(jobID: id)?.state == .fulfilled)
            #expect(twice.status(jobID: id)?.userID == "u-1")
            // The walk is bounded: a chain longer than any the fulfiller writes stops after maximumMoveHops hashes.
            let long = keys.newJobID(partition: 0)
            for hop in 0...JobStatus.maximumMoveHops + 2 {
                _ = try await redis.send(
                    "HSET", keys.job(long, partition: Partition(hop)), "state", "verifying", JobStatus.movedToField, String(hop + 1))
            }
            #expect(try await keys.locateJob(long, on: redis)?.key == keys.job(long, partition: Partition(JobStatus.maximumMoveHops)))
            // A moved.to outside the layout is ignored.
            let odd = keys.newJobID(partition: 4)
            _ = try await redis.send("HSET", keys.job(odd, partition: 4), "state", "queued", JobStatus.movedToField, "99")
            #expect(try await keys.locateJob(odd, on: redis)?.key == keys.job(odd, partition: 4))
            // Ids issued before a repartition (random, any first digits) are found in the legacy {p0} slot.
            let legacy = "ffff" + String(id.dropFirst(4))
            _ = try await redis.send("HSET", "tg:{p0}:job:\(legacy)", "state", "rejected")
            #expect(try await keys.readJobStatus(legacy, on: redis)?.state == .rejected)
            #expect(try await keys.locateJob("not-a-job-id", on: redis) == nil)
        }
    }
}
