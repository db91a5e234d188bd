import Core
import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import Pipeline
import Redis
import ServiceKit
import TestSupport
import Testing

@testable import ingest

@Suite struct ResilienceTests {
    /// Redis stopped → 503 quickly for enqueues and reads; restarted → 200 again, same app instance.
    @Test func redisDownGives503AndRecoversWithoutRestart() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                let alice = try await IngestHarness.userHeaders("alice")
                let first = try await client.execute(
                    uri: "/v1/apple/notifications", method: .post,
                    body: ByteBuffer(bytes: try IngestHarness.distinctNotificationBody("1")))
                #expect(first.status == .ok)
                let ready = try await client.execute(uri: "/readyz", method: .get)
                #expect(ready.status == .ok)

                await server.kill()
                let started = ContinuousClock.now
                let down = try await client.execute(
                    uri: "/v1/apple/notifications", method: .post,
                    body: ByteBuffer(bytes: try IngestHarness.distinctNotificationBody("2")))
                #expect(down.status == .serviceUnavailable)
                #expect(IngestHarness.errorCode(down) == "redis_unavailable")
                #expect(down.headers[.retryAfter] != nil)
                #expect(ContinuousClock.now - started < .seconds(5))
                let read = try await client.execute(uri: "/v1/users/alice/entitlements", method: .get, headers: alice)
                #expect(read.status == .serviceUnavailable)
                let notReady = try await client.execute(uri: "/readyz", method: .get)
                #expect(notReady.status == .serviceUnavailable)
                let health = try await client.execute(uri: "/healthz", method: .get)
                #expect(health.status == .ok)

                try await server.restart()
                var status: HTTPResponse.Status = .serviceUnavailable
                for attempt in 0..<50 where status != .ok {
                    let again = try await client.execute(
                        uri: "/v1/apple/notifications", method: .post,
                        body: ByteBuffer(bytes: try IngestHarness.distinctNotificationBody("\(3 + attempt)")))
                    status = again.status
                    if status != .ok { try await Task.sleep(for: .milliseconds(100)) }
                }
                #expect(status == .ok)
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                #expect(try await redis.xlen("tg:{p0}:jobs") == 2)
            }
        }
    }

    /// Redis slower than the command timeout: `503` while Redis still holds the write (ingest cannot know
    /// whether it will happen; here Redis drops it with the timed-out connection), and the app's retry of the
    /// same submission, once Redis is back, leaves exactly one job — the one it is given.
    @Test func aSlowRedisGives503AndTheRetryLeavesOneJob() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server, configure: { $0.shared.redis.commandTimeout = .milliseconds(300) }) { client in
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let alice = try await IngestHarness.userHeaders("alice")
                let submit = {
                    try await client.execute(
                        uri: "/v1/receipts", method: .post, headers: alice,
                        body: ByteBuffer(string: #"{"receipt":"QUJDRA=="}"#))
                }
                // Paused far longer than the test needs (a loaded machine may be slow to send the request), then
                // taken back once the 503 is seen.
                _ = try await redis.send("CLIENT", "PAUSE", "30000", "WRITE")
                let slow = try await submit()
                #expect(slow.status == .serviceUnavailable)
                #expect(IngestHarness.errorCode(slow) == "redis_unavailable")
                #expect(slow.headers[.retryAfter] != nil)
                #expect(try await redis.xlen("tg:{p0}:jobs") == 0, "the 503 should come while Redis still holds the write")
                _ = try await redis.send("CLIENT", "UNPAUSE")

                // The app retries the same receipt until it is accepted (ingest reconnects meanwhile).
                var retried: String?
                for _ in 0..<100 where retried == nil {
                    let response = try await submit()
                    if response.status == .accepted {
                        retried = IngestHarness.json(response)["jobId"]?.string
                    } else {
                        try await Task.sleep(for: .milliseconds(100))
                    }
                }
                let jobID = try #require(retried)
                #expect(try await redis.xrange("tg:{p0}:jobs").compactMap { $0.string(Job.Field.id) } == [jobID])
                #expect(try await IngestHarness.json(submit())["jobId"]?.string == jobID)
            }
        }
    }

    /// 200 concurrent notifications all land in the stream, in fewer round trips than requests (batches not
    /// bounded by bytes here, 8 round trips at most in flight).
    @Test func concurrentEnqueuesShareRoundTrips() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(
                server,
                configure: {
                    $0.enqueueBatchBytes = 1 << 24
                    $0.enqueueRoundTrips = 8
                }
            ) { client in
                let bodies = try (0..<200).map { try IngestHarness.distinctNotificationBody("\($0)") }
                let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                    for body in bodies {
                        group.addTask {
                            try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: body)).status
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(statuses.count == 200)
                #expect(statuses.allSatisfy { $0 == .ok })
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                #expect(try await redis.xlen("tg:{p0}:jobs") == 200)
                let metrics = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
                let count = Self.sample(metrics, "tollgate_ingest_enqueue_batch_size_count")
                let sum = Self.sample(metrics, "tollgate_ingest_enqueue_batch_size_sum")
                #expect(sum == 200)
                #expect(count > 0 && count < 200, "round trips: \(count)")
                #expect(metrics.contains(#"tollgate_ingest_requests_total{route="/v1/apple/notifications",status="200"} 200"#))
            }
        }
    }

    /// With the default 16 KiB batch bound, 19 KB notifications leave one per round trip (so that Redis reads
    /// each whole before its next fsync), while small V1 notifications still share round trips.
    @Test func batchesAreBoundedByBytes() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(
                server,
                configure: {
                    $0.enqueueRoundTrips = 2
                    $0.v1SharedSecret = "s"
                }
            ) { client in
                let large = try (0..<40).map { try IngestHarness.distinctNotificationBody("\($0)") }
                let small = (0..<200).map {
                    let receipt = Data("receipt \($0)".utf8).base64EncodedString()
                    return Array(#"{"notification_type":"DID_RENEW","password":"s","latest_receipt":"\#(receipt)"}"#.utf8)
                }
                for (bodies, maxRoundTrips) in [(large, 40.0), (small, 199.0)] {
                    let before = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
                    let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                        for body in bodies {
                            group.addTask {
                                try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: body))
                                    .status
                            }
                        }
                        return try await group.reduce(into: []) { $0.append($1) }
                    }
                    #expect(statuses.count == bodies.count && statuses.allSatisfy { $0 == .ok })
                    let after = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
                    let name = "tollgate_ingest_enqueue_batch_size"
                    let roundTrips = Self.sample(after, name + "_count") - max(0, Self.sample(before, name + "_count"))
                    let jobs = Self.sample(after, name + "_sum") - max(0, Self.sample(before, name + "_sum"))
                    #expect(jobs == Double(bodies.count))
                    if bodies == large {
                        #expect(roundTrips == maxRoundTrips, "round trips: \(roundTrips)")
                    } else {
                        #expect(roundTrips <= maxRoundTrips, "round trips: \(roundTrips)")
                    }
                }
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                #expect(try await redis.xlen("tg:{p0}:jobs") == 240)
            }
        }
    }

    /// While Redis is stalled, one round trip is in flight and the queue holds one call: the rest get
    /// `503 overloaded` with `Retry-After` at once, and only the accepted ones are in the stream.
    @Test func aFullEnqueueQueueGives503() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(
                server,
                configure: {
                    $0.enqueueQueueLimit = 1
                    $0.enqueueRoundTrips = 1
                }
            ) { client in
                let stall = try await IngestHarness.redis(server)
                defer { stall.close() }
                let sleeper = Task { try await stall.send(RedisCommand("DEBUG", "SLEEP", "1"), timeout: .seconds(5)) }
                try await Task.sleep(for: .milliseconds(200))
                let bodies = try (0..<6).map { try IngestHarness.distinctNotificationBody("\($0)") }
                let responses = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?, String?).self) { group in
                    for body in bodies {
                        group.addTask {
                            let response = try await client.execute(
                                uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: body))
                            return (response.status, IngestHarness.errorCode(response), response.headers[.retryAfter])
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                _ = try await sleeper.value
                let accepted = responses.filter { $0.0 == .ok }.count
                let overloaded = responses.filter { $0.0 == .serviceUnavailable && $0.1 == "overloaded" && $0.2 == "1" }.count
                #expect(accepted >= 1)
                #expect(overloaded >= 1)
                #expect(accepted + overloaded == 6)
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                #expect(try await redis.xlen("tg:{p0}:jobs") == accepted)
            }
        }
    }

    /// With replicas required and none acknowledging, Apple gets 503 (so it retries), never 200.
    @Test func missingReplicaAcknowledgementGives503() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(
                server,
                configure: {
                    $0.waitReplicas = 1
                    $0.waitTimeoutMilliseconds = 50
                }
            ) { client in
                let response = try await client.execute(
                    uri: "/v1/apple/notifications", method: .post,
                    body: ByteBuffer(bytes: try IngestHarness.notificationBody()))
                #expect(response.status == .serviceUnavailable)
                #expect(IngestHarness.errorCode(response) == "replication_timeout")
            }
        }
    }

    @Test func readyzHealthzAndMetricsAnswer() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server, framework: .live) { client in
                #expect(try await client.execute(uri: "/healthz", method: .get).status == .ok)
                let ready = try await client.execute(uri: "/readyz", method: .get)
                #expect(IngestHarness.json(ready)["status"]?.string == "ready")
                // `/readyz` checks exactly what ingest loaded: the pipeline's library and ingest's list (its customer
                // library was once loaded and left out).
                let checked = IngestHarness.json(ready)["libraries"]?.array?.compactMap(\.string)
                #expect(checked == [PipelineFunctions.library.name] + App.functionLibraries.map(\.name))
                #expect(checked?.contains(CustomerInfo.library.name) == true)
                // A library ingest loaded that goes missing makes it not ready, named.
                let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
                try await redis.connect()
                defer { redis.close() }
                _ = try await redis.send(RedisCommand(keyless: "FUNCTION", "DELETE", CustomerInfo.library.name))
                let missing = try await client.execute(uri: "/readyz", method: .get)
                #expect(missing.status == .serviceUnavailable)
                #expect(IngestHarness.json(missing)["missing"]?.array?.compactMap(\.string) == [CustomerInfo.library.name])
                let metrics = try await client.execute(uri: "/metrics", method: .get)
                #expect(String(buffer: metrics.body).contains("tollgate_ingest_requests_total"))
                let unknown = try await client.execute(uri: "/v1/nothing", method: .get)
                #expect(unknown.status == .notFound)
                #expect(IngestHarness.errorCode(unknown) == "not_found")
            }
        }
    }

    static func sample(_ text: String, _ name: String) -> Double {
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.split(separator: " ").last ?? "") ?? -1
        }
        return -1
    }
}
