import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification
@testable import ingest

/// With 16 partitions on a real 6-node Redis Cluster, through ``RedisClusterClient`` (which refuses any cross-slot
/// call before sending it): ingest's enqueue and backlog settling, and the reconciler's enqueue and emit, are each
/// one single-slot call, and their keys land on the primary that serves the partition's slot.
@Suite(.serialized)
struct PartitionedCallsClusterTests {
    static let now: Int64 = 1_767_225_600_000

    /// One partition's jobs stream length, asked of the primary that serves its slot directly.
    static func length(_ stream: String, _ cluster: RedisCluster, _ map: ClusterSlotMap) async throws -> Int64? {
        let primary = try #require(map.primaries[ClusterKeySlot.slot(stream)])
        return try await cluster.send(to: primary.port, "XLEN", stream).int
    }

    @Test func ingestEnqueuesOneSlotPerJobInItsPartition() async throws {
        let keys = Keys(prefix: "tg", layout: try PartitionLayout(count: 16))
        // A user in every partition, so the jobs spread over all three primaries.
        var users: [Partition: String] = [:]
        for index in 0..<5000 where users.count < 16 {
            let user = "cluster-user-\(index)"
            if users[keys.partition(ofUser: user)] == nil { users[keys.partition(ofUser: user)] = user }
        }
        try await withRedisCluster { cluster in
            let client = try await cluster.connectedClient()
            defer { client.close() }
            try await IngestFunctions.library.load(on: client)
            let map = client.slotMap
            let limits = IngestFunctions.Limits(maxJobs: 100, maxBytes: 1 << 20, inFlightCap: 5)
            var primaries: Set<Int> = []
            for (partition, user) in users {
                let job = Job(
                    id: keys.newJobID(partition: partition), kind: .receipt, payload: Array("QUJD".utf8), source: .client,
                    userID: user, receivedAtMilliseconds: Self.now, countedBytes: 4,
                    dedupeKey: keys.partitionKey(partition, "dedupe", "d-\(user)"))
                let status = JobStatus(jobID: job.id, state: .queued, kind: .receipt, userID: user, updatedAtMilliseconds: Self.now)
                let command = IngestFunctions.enqueueCommand(
                    job: job, status: status, partition: partition, keys: keys, limits: limits, nowMilliseconds: Self.now)
                let reply = try await client.send(command)
                #expect(reply.array?.map(\.string) == [job.id, nil] && reply.array?.last?.int == 1, "\(reply)")
                #expect(try await Self.length(keys.jobs(partition: partition).stream, cluster, map) == 1)
                #expect(try await keys.readJobStatus(job.id, on: client)?.state == .queued)
                #expect(try await IngestFunctions.settleBacklog(keys: keys, partition: partition, on: client) == false)
                let primary = try #require(map.primaries[ClusterKeySlot.slot(keys.jobs(partition: partition).stream)])
                primaries.insert(primary.port)
            }
            #expect(primaries.count == 3)

            // A notification (no user, no in-flight set) in its chain's partition.
            let otid = "2000000123"
            let partition = keys.partition(ofOriginalTransaction: otid)
            let job = Job(
                id: keys.newJobID(partition: partition), kind: .notificationV2, payload: Array(#"{"signedPayload":"x"}"#.utf8),
                source: .apple, receivedAtMilliseconds: Self.now, countedBytes: 20,
                dedupeKey: keys.partitionKey(partition, "dedupe", "n-1"))
            let status = JobStatus(jobID: job.id, state: .queued, kind: job.kind, updatedAtMilliseconds: Self.now)
            let reply = try await client.send(
                IngestFunctions.enqueueCommand(
                    job: job, status: status, partition: partition, keys: keys, limits: limits, nowMilliseconds: Self.now))
            #expect(reply.array?.last?.int == 1, "\(reply)")

            // An order: the user's keys in one call, the token mapping in its own slot.
            let order = Order(
                orderNo: Order.newOrderNo(), userID: "cluster-user-0", productId: "com.example.coins100",
                appAccountToken: Order.newAppAccountToken(), createdAtMilliseconds: Self.now)
            let created = try await IngestFunctions.createOrder(order, keys: keys, lifetime: .seconds(60), cap: 3, on: client)
            #expect(created == .created)
            #expect(try await client.hgetall(keys.appAccountToken(order.appAccountToken))["user"] == "cluster-user-0")

            // The control: the layout-1 shape (stream in {p0}-era partition 0, job hash where its id says) is refused.
            let stray = Job(
                id: keys.newJobID(partition: partition == 0 ? 1 : 0), kind: .receipt, payload: [1], source: .apple,
                receivedAtMilliseconds: Self.now, dedupeKey: keys.partitionKey(partition, "dedupe", "n-2"))
            do {
                _ = try await client.send(
                    IngestFunctions.enqueueCommand(
                        job: stray, status: status, partition: partition, keys: Keys(prefix: "tg"), limits: limits,
                        nowMilliseconds: Self.now))
                Issue.record("a cross-slot enqueue was sent")
            } catch let error as RedisError {
                #expect(error.code == "cross_slot")
            }
        }
    }

    @Test func theReconcilersEnqueueAndEmitAreSingleSlot() async throws {
        let keys = Keys(prefix: "tg", layout: try PartitionLayout(count: 16))
        try await withRedisCluster { cluster in
            let client = try await cluster.connectedClient()
            defer { client.close() }
            try await ReconcileFunctions.library.load(on: client)
            let map = client.slotMap
            for otid in ["1000000001", "1000000002", "1000000003", "1000000004"] {
                let partition = keys.partition(ofNotification: otid, uuid: "uuid-\(otid)") ?? -1
                #expect(partition == keys.partition(ofOriginalTransaction: otid))
                let job = Job(
                    id: keys.newJobID(partition: partition), kind: .notificationV2, payload: Array("{}".utf8), source: .reconciler,
                    receivedAtMilliseconds: Self.now)
                let seen = keys.reconcileSeen(notificationUUID: "uuid-\(otid)", partition: partition)
                let first = try await ReconcileFunctions.enqueue(
                    on: client, keys: keys, job: job, partition: partition, seenKey: seen, seenTTLSeconds: 60)
                #expect(first.created && first.jobID == job.id)
                let again = try await ReconcileFunctions.enqueue(
                    on: client, keys: keys, job: job, partition: partition, seenKey: seen, seenTTLSeconds: 60)
                #expect(!again.created && again.jobID == job.id)
                #expect(try await Self.length(keys.jobs(partition: partition).stream, cluster, map) ?? 0 >= 1)
            }
            // The lease and a fenced cursor write share the control slot.
            #expect(try await ReconcileFunctions.acquire(on: client, lease: keys.reconcileLease, token: "t", ttl: .seconds(5)))
            #expect(
                try await ReconcileFunctions.write(
                    on: client, lease: keys.reconcileLease, token: "t", hash: keys.reconcileCursor(environment: "Production"),
                    fields: [("checkpoint", "1")]))
            // emit: the verified stream and job hash of the user's partition.
            let user = "emit-user"
            let partition = keys.partition(ofUser: user)
            let event = PurchaseEvent(
                jobId: keys.newJobID(partition: partition), kind: .transaction, source: .reconciler, userId: user,
                environment: "Production", verifiedAt: Self.now, transactions: [])
            try await ReconcileFunctions.emit(
                on: client, keys: keys, event: event, deploymentIsProduction: false, partition: partition,
                nowMilliseconds: Self.now)
            #expect(try await Self.length(keys.verified(partition: partition).stream, cluster, map) == 1)
            #expect(try await keys.readJobStatus(event.jobId, on: client)?.state == .verifying)
        }
    }
}
