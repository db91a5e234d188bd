import AppStore
import Foundation
import HTTPClient
import Pipeline
import Redis
import ServiceKit
import ServiceLifecycle
import TestSupport
import Testing

@testable import Verification
@testable import verifier

/// The verifier built by `App.build` on a real 6-node Redis Cluster with 16 partitions, against the
/// real `appstore-sim`: it starts on the cluster's seeds, consumes every partition, and writes each job's event in
/// its own partition. Serialized, like the other cluster suites.
@Suite("Verifier on Redis Cluster", .serialized)
struct VerifierClusterTests {
    @Test func receiptJobsInSeveralPartitionsAreVerifiedIntoTheirOwnPartitions() async throws {
        try await withRedisCluster { cluster in
            try await withSim { sim in
                var environment = sim.environment
                environment["TOLLGATE_REDIS_URL"] = cluster.url
                environment["TOLLGATE_PARTITIONS"] = "16"
                environment["TOLLGATE_METRICS_PORT"] = "0"
                environment["TOLLGATE_METRICS_HOST"] = "127.0.0.1"
                environment["TOLLGATE_RECONCILE_ENABLED"] = "false"
                environment["LOG_LEVEL"] = "critical"
                let configuration = try VerifierConfiguration(environment: environment)
                let keys = configuration.shared.keys
                let redis = try RedisClusterClient(configuration: cluster.configuration(), logger: testLogger)
                defer { redis.close() }
                let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
                let group = try await App.build(
                    configuration: configuration, logger: testLogger, consumer: "verifier-c", handlesSignals: false,
                    onMetricsServerRunning: { port in
                        continuation.yield(port)
                        continuation.finish()
                    })
                let run = Task { try await group.run() }
                var iterator = ports.makeAsyncIterator()
                let port = try #require(await iterator.next())

                var jobs: [Partition: String] = [:]
                for partition: Partition in [0, 7, 15] {
                    let receipt = try #require(try await sim.purchase()["receipt"] as? String)
                    let job = Job(
                        id: Job.newID(), kind: .receipt, payload: Array(receipt.utf8), source: .client, userID: "user-\(partition)",
                        orderNo: nil, receivedAtMilliseconds: Int64(Date().timeIntervalSince1970 * 1000))
                    _ = try await redis.xadd(keys.jobs(partition: partition).stream, fields: job.fields)
                    jobs[partition] = job.id
                }
                for (partition, jobID) in jobs {
                    let found = try await eventuallyValue { () async throws -> StreamEntry? in
                        try await redis.xrange(keys.verified(partition: partition).stream).first
                    }
                    let entry = try #require(found, "no event in partition \(partition)")
                    let event = try PurchaseEvent.decode(try #require(entry.fields[PurchaseEvent.streamField]))
                    #expect(event.jobId == jobID)
                    #expect(try await redis.hgetall(keys.job(jobID, partition: partition))["state"] == "verifying")
                    #expect(
                        try await redis.xpendingSummary(keys.jobs(partition: partition).stream, group: App.consumerGroup)
                            .count == 0)
                }
                // One blocking reader per partition, spread over the three primaries.
                var readers = 0
                for primary in redis.slotMap.allPrimaries {
                    readers += try await readerConnections(cluster, port: primary.port, name: "verifier-c-reader")
                }
                #expect(readers == 16)
                // The operators' readiness check works on the cluster.
                let ready = try await sim.transport.send(
                    HTTPTransportRequest(method: .get, url: try #require(URL(string: "http://127.0.0.1:\(port)/readyz"))))
                #expect(ready.status == 200, "\(String(decoding: ready.body, as: UTF8.self))")

                await group.triggerGracefulShutdown()
                try await run.value
            }
        }
    }

    /// How many clients named `name` the node at `port` has.
    private func readerConnections(_ cluster: RedisCluster, port: Int, name: String) async throws -> Int {
        let list = try await cluster.send(to: port, "CLIENT", "LIST").string ?? ""
        return list.split(whereSeparator: \.isNewline).filter { $0.contains(" name=\(name) ") }.count
    }
}
