import AppStore
import Foundation
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification
@testable import verifier

/// The verifier with several partitions (on one server): it consumes every partition's jobs stream, and writes each
/// job's outcome (the verified event, the job's status, the ack) in the partition the job came from.
@Suite(.serialized)
struct VerifierPartitionTests {
    @Test func eachJobIsVerifiedIntoTheVerifiedStreamOfItsOwnPartition() async throws {
        try await VerifierHarness.with(partitions: 4) { harness in
            let keys = Keys(layout: try PartitionLayout(count: 4))
            var jobs: [Partition: String] = [:]
            for partition: Partition in [1, 3] {
                let receipt = try #require(try await harness.sim.purchase()["receipt"] as? String)
                let job = Job(
                    id: Job.newID(), kind: .receipt, payload: Array(receipt.utf8), source: .client, userID: "user-\(partition)",
                    orderNo: nil, receivedAtMilliseconds: Int64(Date().timeIntervalSince1970 * 1000))
                _ = try await harness.redis.xadd(keys.jobs(partition: partition).stream, fields: job.fields)
                jobs[partition] = job.id
            }
            try await harness.withVerifier(["TOLLGATE_PARTITIONS": "4"]) { _ in
                for (partition, jobID) in jobs {
                    let verified = keys.verified(partition: partition).stream
                    let found = try await eventuallyValue { () async throws -> [StreamEntry]? in
                        let entries = try await harness.redis.xrange(verified)
                        return entries.isEmpty ? nil : entries
                    }
                    let entries = try #require(found, "no event in partition \(partition)")
                    let event = try PurchaseEvent.decode(try #require(entries.first?.fields[PurchaseEvent.streamField]))
                    #expect(event.jobId == jobID)
                    #expect(entries.count == 1)
                    // The job's status is in its partition, and its entry acknowledged there.
                    let status = try await harness.redis.hgetall(keys.job(jobID, partition: partition))
                    #expect(status["state"] == "verifying")
                    #expect(status["verified.at"] != nil)
                    let pending = try await harness.redis.xpendingSummary(
                        keys.jobs(partition: partition).stream, group: App.consumerGroup)
                    #expect(pending.count == 0)
                }
                for partition: Partition in [0, 2] {
                    #expect(try await harness.redis.xlen(keys.verified(partition: partition).stream) == 0)
                }
                #expect(try await harness.redis.send("EXISTS", keys.job(jobs[1] ?? "", partition: 0)).int == 0)
            }
        }
    }
}
