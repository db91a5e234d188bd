import AppStore
import Foundation
import Ledger
import Pipeline
import Redis
import ServiceKit
import TestSupport
import Testing

@testable import Verification

/// The reconciler with 16 partitions: its lease and cursors stay in the control slot `{p0}`, a recovered notification
/// starts in its purchase chain's partition with its `seen` marker, and a sweeper correction goes to the user's
/// partition, read from that partition's sweep index.
@Suite(.serialized)
struct ReconcilePartitionTests {
    typealias Support = ReconcileTestSupport

    @Test func recoveredNotificationsStartInTheirChainsPartitionWithTheirMarkers() async throws {
        try await VerifierHarness.with(partitions: 16) { harness in
            let keys = harness.keys
            var purchases: [[String: Any]] = []
            for _ in 0..<4 { purchases.append(try await harness.sim.purchase()) }
            let configuration = try VerifierConfiguration(environment: harness.environment(try Support.settings(harness)))
            #expect(configuration.shared.keys == keys)
            let report = try await ReconcileOnce.run(configuration: configuration, arguments: .init(), logger: harness.logger)
            #expect(report.enqueued == 4)

            var used: Set<Partition> = []
            for purchase in purchases {
                let signedPayload = try #require(purchase["signedPayload"] as? String)
                let peek = try #require(NotificationPeek(signedPayload: signedPayload))
                let otid = try #require(peek.originalTransactionId)
                let partition = keys.partition(ofOriginalTransaction: otid)
                used.insert(partition)
                let seen = keys.reconcileSeen(notificationUUID: peek.notificationUUID, partition: partition)
                #expect(seen.hasPrefix("tg:\(keys.tag(partition: partition)):reconcile:seen:"))
                let jobID = try #require(try await harness.redis.send("GET", seen).string)
                #expect(keys.partition(ofJob: jobID) == partition)
                let entries = try await harness.redis.xrange(keys.jobs(partition: partition).stream)
                #expect(entries.contains { $0.string(Job.Field.id) == jobID })
                #expect(try await harness.redis.send("HGET", keys.job(jobID, partition: partition), "state").string == "queued")
            }
            #expect(used != [0])
            var total = 0
            for partition in keys.partitions { total += try await harness.redis.xlen(keys.jobs(partition: partition).stream) }
            #expect(total == 4)
            // The leader's state is deployment-wide, under today's names.
            #expect(keys.reconcileLease == "tg:{p0}:reconcile:lease")
            #expect(keys.reconcileCursor(environment: "Production") == "tg:{p0}:reconcile:cursor:Production")
            #expect(try await harness.redis.send("HEXISTS", "tg:{p0}:reconcile:cursor:Production", "checkpoint").int == 1)
            #expect(try await harness.redis.send("HEXISTS", "tg:{p0}:reconcile:status", "pass.at").int == 1)

            // Forget the checkpoint: the next pass reads the same history and finds every seen marker in its partition.
            _ = try await harness.redis.send("DEL", "tg:{p0}:reconcile:cursor:Production")
            let again = try await ReconcileOnce.run(configuration: configuration, arguments: .init(), logger: harness.logger)
            #expect(again.enqueued == 0)
            #expect(again.seen == 4)
        }
    }

    @Test func theSweeperReadsEveryPartitionsIndexAndCorrectsIntoTheUsersPartition() async throws {
        try await VerifierHarness.with(partitions: 16) { harness in
            let keys = harness.keys
            let user = try #require((0..<100).map { "sweep-user-\($0)" }.first { keys.partition(ofUser: $0) != 0 })
            let partition = keys.partition(ofUser: user)
            let vip = try await harness.sim.purchase([
                "productId": "com.example.vip.month", "type": "Auto-Renewable Subscription", "expiresInSeconds": 3600,
            ])
            let id = try #require(vip["transactionId"] as? String)
            let signed = try #require(vip["signedTransaction"] as? String)
            let expires = try #require(NotificationPeekTestView.expires(of: signed))
            try await harness.sim.post("/sim/events", ["type": "DID_RENEW", "transactionId": id, "notify": false])
            // What the fulfiller writes for a subscription the ledger believes ended: in the user's partition.
            let member = #"["Production","vip","\#(user)"]"#
            let due = expires - 7_200_000
            _ = try await harness.redis.send("ZADD", keys.subscriptionsDue(partition: partition), due, member)
            _ = try await harness.redis.send("HSET", keys.subscriptionsDueReference(partition: partition), member, id)
            _ = try await harness.redis.send(
                "HSET", keys.transaction(user: user, transactionId: id), "otid", id, "expires", expires, "state", "applied")
            let configuration = try VerifierConfiguration(environment: harness.environment(try Support.settings(harness)))
            let report = try await ReconcileOnce.run(configuration: configuration, arguments: .init(), logger: harness.logger)
            #expect(report.due == 1)
            #expect(report.corrected == 1)

            let verified = try await harness.redis.xrange(keys.verified(partition: partition).stream)
            #expect(verified.count == 1)
            let jobID = try #require(verified.first?.string("job.id") ?? verified.first?.string("jobId"))
            #expect(keys.partition(ofJob: jobID) == partition)
            #expect(try await harness.redis.send("HGET", keys.job(jobID, partition: partition), "state").string == "verifying")
            for other in keys.partitions where other != partition {
                #expect(try await harness.redis.xlen(keys.verified(partition: other).stream) == 0, "partition \(other)")
            }
            // Postponed in the index it was read from.
            let next = try await harness.redis.send("ZSCORE", keys.subscriptionsDue(partition: partition), member).string.flatMap {
                Int64($0)
            }
            #expect((next ?? 0) > due)
        }
    }
}
