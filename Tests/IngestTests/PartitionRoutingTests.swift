import AppStore
import AppStoreTesting
import Core
import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@testable import ingest

/// Where ingest puts a job with N partitions (docs/CLUSTER.md §3 "Who decides the partition"): a user's submission in
/// Pu(user), a notification in Po(originalTransactionId) (else by its UUID), every key of the enqueue in that slot, the
/// partition in the job id, and `GET /v1/jobs/{id}` finding it there and following `moved.to`.
@Suite struct PartitionRoutingTests {
    static let layout = Result { try PartitionLayout(count: 16) }

    static func keys() throws -> Keys { Keys(prefix: "tg", layout: try layout.get()) }

    /// Ingest configured for 16 partitions.
    static func sixteen(_ configuration: inout IngestConfiguration) throws {
        try IngestHarness.partitions(16)(&configuration)
    }

    /// A V2 notification signed by the test CA, naming `otid` in its nested transaction (when given).
    static func notification(uuid: String, otid: String?) throws -> [UInt8] {
        let signer = try IngestHarness.testAuthority.get().signer()
        var data: [String: JSONValue] = ["bundleId": .string(IngestHarness.app.bundleId), "environment": .string("Sandbox")]
        if let otid {
            let transaction = JSONValue.object(["originalTransactionId": .string(otid), "transactionId": .string(otid + "9")])
            data["signedTransactionInfo"] = .string(try signer.sign(json: transaction.data))
        }
        let payload = JSONValue.object([
            "notificationType": .string("DID_RENEW"), "notificationUUID": .string(uuid),
            "signedDate": .integer(1_767_225_600_000), "data": .object(data),
        ])
        let jws = try signer.sign(json: payload.data)
        return Array("{\"signedPayload\":\"\(jws)\"}".utf8)
    }

    /// The only job of partition `partition`'s stream, checking that no other partition holds one.
    static func onlyJob(in partition: Partition, keys: Keys, _ redis: RedisConnection) async throws -> Job {
        for other in keys.partitions where other != partition {
            #expect(try await redis.xlen(keys.jobs(partition: other).stream) == 0, "partition \(other)")
        }
        let entries = try await redis.xrange(keys.jobs(partition: partition).stream)
        #expect(entries.count == 1)
        return try Job(entry: try #require(entries.first))
    }

    /// Checks the job lives in `partition`: id prefix, status hash, dedupe key; returns it.
    static func checkPlacement(_ job: Job, partition: Partition, keys: Keys, _ redis: RedisConnection) async throws {
        #expect(job.id.prefix(4) == String(format: "%04x", partition.index))
        #expect(keys.partition(ofJob: job.id) == partition)
        #expect(try await redis.send("HGET", keys.job(job.id, partition: partition), "state").string == "queued")
        let dedupe = try #require(job.dedupeKey)
        #expect(dedupe.hasPrefix("tg:\(keys.tag(partition: partition)):dedupe:"))
        #expect(try await redis.send("GET", dedupe).string == job.id)
        #expect(try await redis.send("HGET", keys.backlog(partition: partition), "\(job.source.rawValue).jobs").string == "1")
    }

    static func getJob(_ client: some TestClientProtocol, _ id: String) async throws -> TestResponse {
        try await client.execute(uri: "/v1/jobs/\(id)", method: .get, headers: try IngestHarness.apiKeyHeaders())
    }

    @Test func aUsersSubmissionStartsInTheUsersPartitionAndIsFoundThere() async throws {
        let keys = try Self.keys()
        // Two users in different partitions, neither 0: the old {p0} names would be wrong for both.
        let users = (0..<200).map { "user-\($0)" }
        let first = try #require(users.first { keys.partition(ofUser: $0) != 0 })
        try await withRedisServer { server in
            try await IngestHarness.withApp(server, configure: Self.sixteen) { client in
                let body = Array(#"{"signedTransaction":"\#(try IngestHarness.transactionJWS())"}"#.utf8)
                let response = try await client.execute(
                    uri: "/v1/transactions", method: .post, headers: try await IngestHarness.userHeaders(first),
                    body: ByteBuffer(bytes: body))
                #expect(response.status == .accepted)
                let jobID = try #require(IngestHarness.json(response)["jobId"]?.string)
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let partition = keys.partition(ofUser: first)
                let job = try await Self.onlyJob(in: partition, keys: keys, redis)
                #expect(job.id == jobID)
                try await Self.checkPlacement(job, partition: partition, keys: keys, redis)
                #expect(try await redis.send("ZSCORE", keys.inFlight(user: first, partition: partition), jobID).string != nil)
                let read = try await client.execute(
                    uri: "/v1/jobs/\(jobID)", method: .get, headers: try await IngestHarness.userHeaders(first))
                #expect(read.status == .ok)
                #expect(IngestHarness.json(read)["status"]?.string == "queued")
            }
        }
    }

    @Test func aV2NotificationStartsInItsPurchaseChainsPartition() async throws {
        let keys = try Self.keys()
        let otid = try #require((0..<500).map { "20000\($0)" }.first { keys.partition(ofOriginalTransaction: $0) != 0 })
        let partition = keys.partition(ofOriginalTransaction: otid)
        let uuid = "routing-v2-with-otid"
        // Not where the UUID alone would put it: the otid decides.
        #expect(keys.router.partition(hashing: uuid) != partition)
        try await withRedisServer { server in
            try await IngestHarness.withApp(server, configure: Self.sixteen) { client in
                let response = try await client.execute(
                    uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: try Self.notification(uuid: uuid, otid: otid)))
                #expect(response.status == .ok)
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let job = try await Self.onlyJob(in: partition, keys: keys, redis)
                try await Self.checkPlacement(job, partition: partition, keys: keys, redis)
                let read = try await Self.getJob(client, job.id)
                #expect(read.status == .ok)
                #expect(IngestHarness.json(read)["jobId"]?.string == job.id)
            }
        }
    }

    @Test func aV2NotificationWithoutATransactionStartsInItsUUIDsPartition() async throws {
        let keys = try Self.keys()
        let uuid = try #require((0..<100).map { "routing-no-otid-\($0)" }.first { keys.router.partition(hashing: $0) != 0 })
        let partition = keys.router.partition(hashing: uuid)
        #expect(keys.partition(ofNotification: nil, uuid: uuid) == partition)
        try await withRedisServer { server in
            try await IngestHarness.withApp(server, configure: Self.sixteen) { client in
                let body = try Self.notification(uuid: uuid, otid: nil)
                let response = try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: body))
                #expect(response.status == .ok)
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let job = try await Self.onlyJob(in: partition, keys: keys, redis)
                try await Self.checkPlacement(job, partition: partition, keys: keys, redis)
                // Apple's retry is the same job: same partition, same dedupe key.
                let again = try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: body))
                #expect(IngestHarness.json(again)["jobId"]?.string == job.id)
                #expect(try await redis.xlen(keys.jobs(partition: partition).stream) == 1)
            }
        }
    }

    @Test func aV1NotificationStartsInItsOriginalTransactionsPartition() async throws {
        let keys = try Self.keys()
        let otid = try #require((0..<500).map { "30000\($0)" }.first { keys.partition(ofOriginalTransaction: $0) != 0 })
        let partition = keys.partition(ofOriginalTransaction: otid)
        let fixture = try Data(contentsOf: IngestHarness.vectors.appendingPathComponent("legacy/server-notification-v1-cancel.json"))
        var object = try #require(JSONValue.read(fixture)?.members)
        object["password"] = .string("foo")
        var unified = object["unified_receipt"]?.members ?? [:]
        unified["latest_receipt_info"] = .array([.object(["original_transaction_id": .string(otid), "transaction_id": .string(otid)])])
        object["unified_receipt"] = .object(unified)
        let body = Array(JSONValue.object(object).data)
        try await withRedisServer { server in
            try await IngestHarness.withApp(
                server,
                configure: {
                    try Self.sixteen(&$0)
                    $0.v1SharedSecret = "foo"
                }
            ) { client in
                let response = try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: body))
                #expect(response.status == .ok)
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let job = try await Self.onlyJob(in: partition, keys: keys, redis)
                try await Self.checkPlacement(job, partition: partition, keys: keys, redis)
                // The hint is not stored: the job carries only the trigger.
                #expect(!String(decoding: job.payload, as: UTF8.self).contains(otid))
            }
        }
    }

    @Test func jobReadsFollowMovedToOnceAndForgedPartitionsAreNotFound() async throws {
        let keys = try Self.keys()
        try await withRedisServer { server in
            try await IngestHarness.withApp(server, configure: Self.sixteen) { client in
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let jobID = keys.newJobID(partition: 3)
                // The fulfiller moved the event to partition 9: the home hash says so, partition 9's is final.
                _ = try await redis.send(
                    "HSET", keys.job(jobID, partition: 3), "state", "verifying", "moved.to", "9", "kind", "transaction")
                _ = try await redis.send(
                    "HSET", keys.job(jobID, partition: 9), "state", "fulfilled", "result", #"{"credited":1}"#, "moved.to", "3")
                let read = try await Self.getJob(client, jobID)
                #expect(read.status == .ok)
                #expect(IngestHarness.json(read)["status"]?.string == "fulfilled")
                // ?wait= reads the same way: a repeated submission waits for the first job, whose status moved.
                let user = "waiting-user"
                let body = ByteBuffer(bytes: Array(#"{"receipt":"V0FJVA=="}"#.utf8))
                let headers = try await IngestHarness.userHeaders(user)
                let first = try await client.execute(uri: "/v1/receipts", method: .post, headers: headers, body: body)
                let submitted = try #require(IngestHarness.json(first)["jobId"]?.string)
                let home = try #require(keys.partition(ofJob: submitted))
                let owner = Partition((home.index + 1) % 16)
                _ = try await redis.send("HSET", keys.job(submitted, partition: home), "moved.to", owner.description)
                _ = try await redis.send("HSET", keys.job(submitted, partition: owner), "state", "fulfilled", "user", user)
                let waited = try await client.execute(uri: "/v1/receipts?wait=2", method: .post, headers: headers, body: body)
                #expect(waited.status == .ok)
                #expect(IngestHarness.json(waited)["jobId"]?.string == submitted)
                #expect(IngestHarness.json(waited)["status"]?.string == "fulfilled")
                // One hop only: partition 9's own moved.to (back to 3) is not followed, and a moved.to whose hash is not
                // there yet leaves the home status.
                let pending = keys.newJobID(partition: 5)
                _ = try await redis.send("HSET", keys.job(pending, partition: 5), "state", "verifying", "moved.to", "11")
                #expect(IngestHarness.json(try await Self.getJob(client, pending))["status"]?.string == "verifying")
                // A hash at the right name under a forged id naming partition 16 or 0xffff: not found, never a crash.
                for prefix in ["0010", "ffff"] {
                    let forged = prefix + String(jobID.dropFirst(4))
                    #expect(keys.partition(ofJob: forged) == nil)
                    _ = try await redis.send("HSET", keys.partitionKey(0, "job", forged), "state", "fulfilled")
                    let response = try await Self.getJob(client, forged)
                    #expect(response.status == .notFound)
                    #expect(IngestHarness.errorCode(response) == "not_found")
                }
            }
        }
    }

    @Test func anOrderIsWrittenInTheUsersPartitionAndItsTokenInItsOwnSlot() async throws {
        let keys = try Self.keys()
        let user = try #require((0..<100).map { "orderer-\($0)" }.first { keys.partition(ofUser: $0) != 0 })
        try await withRedisServer { server in
            try await IngestHarness.withApp(server, configure: Self.sixteen) { client in
                let response = try await client.execute(
                    uri: "/v1/orders", method: .post, headers: try await IngestHarness.userHeaders(user),
                    body: ByteBuffer(bytes: Array(#"{"productId":"com.example.coins100"}"#.utf8)))
                #expect(response.status == .created)
                let object = IngestHarness.json(response)
                let orderNo = try #require(object["orderNo"]?.string)
                let token = try #require(object["appAccountToken"]?.string)
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let order = keys.order(user: user, orderNo: orderNo)
                #expect(order.hasPrefix("tg:\(keys.tag(partition: keys.partition(ofUser: user))):u:\(user):"))
                #expect(try await redis.send("HGET", order, "state").string == "pending")
                let mapping = try await redis.hgetall(keys.appAccountToken(token))
                #expect(mapping == ["user": user, "order.no": orderNo])
                let ttl = try await redis.send("PTTL", keys.appAccountToken(token)).int ?? -1
                #expect(ttl > 0)
            }
        }
    }

    @Test func eachPartitionHoldsItsShareOfTheBacklogBudget() async throws {
        let keys = try Self.keys()
        let users = (0..<400).map { "budget-\($0)" }
        let first = try #require(users.first)
        let sameUser = first
        let otherPartition = try #require(users.first { keys.partition(ofUser: $0) != keys.partition(ofUser: first) })
        try await withRedisServer { server in
            // 16 jobs for the deployment: one per partition.
            try await IngestHarness.withApp(
                server,
                configure: {
                    try Self.sixteen(&$0)
                    $0.maxBacklog = 16
                }
            ) { client in
                func submit(_ user: String, _ receipt: String) async throws -> TestResponse {
                    try await client.execute(
                        uri: "/v1/receipts", method: .post, headers: try await IngestHarness.userHeaders(user),
                        body: ByteBuffer(bytes: Array(#"{"receipt":"\#(receipt)"}"#.utf8)))
                }
                #expect(try await submit(first, "QUJD").status == .accepted)
                let full = try await submit(sameUser, "REVG")
                #expect(full.status == .serviceUnavailable)
                #expect(IngestHarness.errorCode(full) == "overloaded")
                #expect(try await submit(otherPartition, "R0hJ").status == .accepted)
            }
        }
    }

    @Test func eachPartitionsLimitsAreItsShareOfTheDeployments() {
        let limits = IngestFunctions.Limits(maxJobs: 100, maxBytes: 128 << 20, inFlightCap: 10)
        #expect(limits.perPartition(of: 1, jobBytes: 1 << 30) == limits)
        let share = limits.perPartition(of: 16, jobBytes: 1000)
        #expect(share == IngestFunctions.Limits(maxJobs: 7, maxBytes: 8 << 20, inFlightCap: 10))
        // A job larger than a partition's byte share still fits an empty partition; no limit stays no limit.
        #expect(limits.perPartition(of: 1024, jobBytes: 512 << 10).maxBytes == 512 << 10)
        #expect(IngestFunctions.Limits(maxJobs: 0, maxBytes: 0, inFlightCap: 0).perPartition(of: 16, jobBytes: 5).maxBytes == 0)
    }

    @Test func theBacklogMonitorSamplesEveryPartition() async throws {
        let keys = try Self.keys()
        try await withRedisServer { server in
            try await IngestHarness.withApp(server, configure: Self.sixteen) { client in
                for index in 0..<3 {
                    let body = try Self.notification(uuid: "monitor-\(index)", otid: "4000\(index)")
                    let response = try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: body))
                    #expect(response.status == .ok)
                }
            }
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            let used = Set((0..<3).map { keys.partition(ofOriginalTransaction: "4000\($0)") })
            #expect(used.count > 1 || !used.contains(0))
            let monitor = BacklogMonitor(
                redis: redis, keys: keys, interval: .seconds(60), metrics: IngestMetrics(), logger: testLogger)
            await monitor.sample()
            #expect(monitor.backlog == 3)
        }
    }
}
