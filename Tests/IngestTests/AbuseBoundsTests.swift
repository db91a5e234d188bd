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

/// What strangers and users can make ingest store or do is bounded (issue 13, items 3–6): forgeries are refused at
/// the door, orders are capped and expire, submissions are rate-limited and capped in flight, `?wait` waiters are
/// capped. Every refusal writes nothing.
@Suite struct AbuseBoundsTests {
    /// A genuine chain with a forged signature, a chain to a stranger's root, and a forged client transaction are
    /// refused with `401 invalid_signature`, and leave nothing in Redis; the genuine notification is taken.
    @Test func forgeriesAreRefusedAtTheDoor() async throws {
        let genuine = try IngestHarness.notificationBody()
        let jws = try #require(String(decoding: genuine, as: UTF8.self).split(separator: "\"").dropFirst(3).first)
        let segments = jws.split(separator: ".")
        let forgedPayload = IngestHarness.base64URL(#"{"notificationType":"ONE_TIME_CHARGE","notificationUUID":"forged"}"#)
        let forged = Array(#"{"signedPayload":"\#(segments[0]).\#(forgedPayload).\#(segments[2])"}"#.utf8)
        let stranger = try TestCertificateAuthority().signer().sign(json: Data(#"{"notificationType":"TEST"}"#.utf8))
        let strangers = Array(#"{"signedPayload":"\#(stranger)"}"#.utf8)
        let transaction = try IngestHarness.transactionJWS().split(separator: ".")
        let forgedTransaction = "\(transaction[0]).\(IngestHarness.base64URL(#"{"productId":"coins2000"}"#)).\(transaction[2])"
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let before = try await IngestHarness.dbsize(redis)
                for body in [forged, strangers] {
                    let response = try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: body))
                    #expect(response.status == .unauthorized)
                    #expect(IngestHarness.errorCode(response) == "invalid_signature")
                }
                let claim = try await client.execute(
                    uri: "/v1/transactions", method: .post, headers: try await IngestHarness.userHeaders("mallory"),
                    body: ByteBuffer(string: #"{"signedTransaction":"\#(forgedTransaction)"}"#))
                #expect(claim.status == .unauthorized)
                #expect(IngestHarness.errorCode(claim) == "invalid_signature")
                #expect(try await redis.xlen("tg:{p0}:jobs") == 0)
                // Only the user's rate bucket was touched by the client's attempt.
                #expect(try await IngestHarness.dbsize(redis) <= before + 1)
                let taken = try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: genuine))
                #expect(taken.status == .ok)
            }
        }
    }

    /// Issue 29 item 6: the operators' endpoints are not on the public listener unless asked for: without
    /// `TOLLGATE_OPS_PORT` and `TOLLGATE_OPS_ON_PUBLIC_LISTENER`, `/metrics`, `/readyz` and `/healthz` are not found there.
    @Test func operatorEndpointsAreNotOnThePublicListenerUnlessAskedFor() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server, configure: { $0.opsOnPublicListener = false }) { client in
                for path in ["/metrics", "/readyz", "/healthz"] {
                    let response = try await client.execute(uri: path, method: .get)
                    #expect(response.status == .notFound, "\(path)")
                }
                let products = try await client.execute(uri: "/v1/products", method: .get)
                #expect(products.status == .ok)
            }
            try await IngestHarness.withApp(server) { client in
                let metrics = try await client.execute(uri: "/metrics", method: .get)
                #expect(metrics.status == .ok)
            }
        }
    }

    /// A genuine notification replayed in other JSON (members added, reordered) is the job it already was.
    @Test func aRewrappedReplayIsTheSameJob() async throws {
        let jws = try #require(
            String(decoding: try IngestHarness.notificationBody(), as: UTF8.self).split(separator: "\"").dropFirst(3).first)
        let wrappers = [
            #"{"signedPayload":"\#(jws)"}"#, #"{ "signedPayload" : "\#(jws)", "x": 1 }"#,
            #"{"a":[1,2,3],"signedPayload":"\#(jws)"}"#,
        ]
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                var ids: Set<String> = []
                for body in wrappers {
                    let response = try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(string: body))
                    #expect(response.status == .ok)
                    ids.insert(IngestHarness.json(response)["jobId"]?.string ?? "")
                }
                #expect(ids.count == 1)
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                #expect(try await redis.xlen("tg:{p0}:jobs") == 1)
            }
        }
    }

    /// A user's unpaid orders are capped (`429 too_many_pending_orders`, `Retry-After`, nothing written) and carry
    /// their expiry, as do their token mappings.
    @Test func pendingOrdersAreCapped() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(
                server,
                configure: {
                    $0.maxPendingOrders = 2
                    $0.orderLifetime = .seconds(600)
                }
            ) { client in
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let keys = Keys(prefix: "tg")
                let alice = try await IngestHarness.userHeaders("alice")
                let body = ByteBuffer(string: #"{"productId":"com.example.coins100"}"#)
                for _ in 0..<2 {
                    let response = try await client.execute(uri: "/v1/orders", method: .post, headers: alice, body: body)
                    #expect(response.status == .created)
                    let json = IngestHarness.json(response)
                    let orderNo = try #require(json["orderNo"]?.string)
                    let token = try #require(json["appAccountToken"]?.string)
                    let orderTTL = try await redis.send("PTTL", keys.order(user: "alice", orderNo: orderNo)).int ?? -1
                    let tokenTTL = try await redis.send("PTTL", keys.appAccountToken(token)).int ?? -1
                    #expect((1...600_000).contains(orderTTL) && (1...600_000).contains(tokenTTL), "\(orderTTL) \(tokenTTL)")
                }
                let keysBefore = try await IngestHarness.dbsize(redis)
                let refused = try await client.execute(uri: "/v1/orders", method: .post, headers: alice, body: body)
                #expect(refused.status == .tooManyRequests)
                #expect(IngestHarness.errorCode(refused) == "too_many_pending_orders")
                let retryAfter = Int(refused.headers[.retryAfter] ?? "") ?? 0
                #expect((590...600).contains(retryAfter), "\(retryAfter)")
                #expect(try await IngestHarness.dbsize(redis) == keysBefore)
                // Another user is not affected.
                let bob = try await client.execute(
                    uri: "/v1/orders", method: .post, headers: try await IngestHarness.userHeaders("bob"), body: body)
                #expect(bob.status == .created)
            }
        }
    }

    /// Unpaid orders expire with their token mappings, and leave the user's indexes, so the cap frees itself.
    @Test func unpaidOrdersExpire() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(
                server,
                configure: {
                    $0.maxPendingOrders = 2
                    $0.orderLifetime = .milliseconds(300)
                }
            ) { client in
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let keys = Keys(prefix: "tg")
                let alice = try await IngestHarness.userHeaders("alice")
                let body = ByteBuffer(string: #"{"productId":"com.example.coins100"}"#)
                var created: [(String, String)] = []
                for _ in 0..<2 {
                    let json = IngestHarness.json(try await client.execute(uri: "/v1/orders", method: .post, headers: alice, body: body))
                    created.append((try #require(json["orderNo"]?.string), try #require(json["appAccountToken"]?.string)))
                }
                try await Task.sleep(for: .milliseconds(700))
                let later = try await client.execute(uri: "/v1/orders", method: .post, headers: alice, body: body)
                #expect(later.status == .created)
                for (orderNo, token) in created {
                    #expect(try await redis.send("EXISTS", keys.order(user: "alice", orderNo: orderNo)).int == 0)
                    #expect(try await redis.send("EXISTS", keys.appAccountToken(token)).int == 0)
                }
                #expect(try await redis.send("ZCARD", keys.orders(user: "alice")).int == 1)
                #expect(try await redis.send("ZCARD", keys.pendingOrders(user: "alice")).int == 1)
            }
        }
    }

    /// Submissions: a fleet-wide per-user rate (`429 rate_limited` with `Retry-After`) and a cap on a user's
    /// unfinished jobs (`429 too_many_in_flight`), freed as soon as one of them is final.
    @Test func aUsersSubmissionsAreRateLimitedAndCappedInFlight() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await IngestHarness.withApp(
                server,
                configure: {
                    $0.userRatePerSecond = 1
                    $0.userBurst = 3
                    $0.userMaxInFlight = 0
                }
            ) { client in
                // A bucket of 3 refilled at 1/s: ten submissions in a row cannot all pass unless they took 7 s.
                let alice = try await IngestHarness.userHeaders("alice")
                let started = ContinuousClock.now
                var answers: [TestResponse] = []
                for index in 0..<10 {
                    answers.append(try await client.execute(uri: "/v1/receipts", method: .post, headers: alice, body: Self.receipt(index)))
                }
                let elapsed = ContinuousClock.now - started
                let statuses = answers.map { Int($0.status.code) }
                let limited = answers.filter { $0.status == .tooManyRequests }
                let described = limited.map { "\(IngestHarness.errorCode($0) ?? "-") \($0.headers[.retryAfter] ?? "-")" }
                #expect(Array(statuses.prefix(3)) == [202, 202, 202], "\(statuses)")
                #expect(!limited.isEmpty || elapsed >= .seconds(7), "\(statuses) in \(elapsed)")
                #expect(Set(described).subtracting(["rate_limited 1"]).isEmpty, "\(described)")
                #expect(Double(answers.count - limited.count) <= 3 + Double(elapsed.components.seconds) + 1, "\(statuses) in \(elapsed)")
                let bob = try await IngestHarness.userHeaders("bob")
                #expect(
                    try await client.execute(uri: "/v1/receipts", method: .post, headers: bob, body: Self.receipt(3)).status == .accepted)
            }
            _ = try await redis.send("FLUSHALL")
            try await IngestHarness.withApp(server, configure: { $0.userMaxInFlight = 2 }) { client in
                let carol = try await IngestHarness.userHeaders("carol")
                var jobs: [String] = []
                for index in 10..<12 {
                    let response = try await client.execute(uri: "/v1/receipts", method: .post, headers: carol, body: Self.receipt(index))
                    #expect(response.status == .accepted)
                    jobs.append(IngestHarness.json(response)["jobId"]?.string ?? "")
                }
                let capped = try await client.execute(uri: "/v1/receipts", method: .post, headers: carol, body: Self.receipt(12))
                #expect(capped.status == .tooManyRequests)
                #expect(IngestHarness.errorCode(capped) == "too_many_in_flight")
                // The same submission again is its job, not a new one: retries never count twice.
                let retry = try await client.execute(uri: "/v1/receipts", method: .post, headers: carol, body: Self.receipt(10))
                #expect(IngestHarness.json(retry)["jobId"]?.string == jobs[0])
                #expect(try await redis.xlen("tg:{p0}:jobs") == 2)
                _ = try await redis.send("HSET", "tg:{p0}:job:\(jobs[0])", "state", "rejected")
                #expect(
                    try await client.execute(uri: "/v1/receipts", method: .post, headers: carol, body: Self.receipt(12)).status == .accepted
                )
            }
        }
    }

    static func receipt(_ index: Int) -> ByteBuffer {
        ByteBuffer(string: #"{"receipt":"\#(Data("receipt \(index)".utf8).base64EncodedString())"}"#)
    }

    /// `?wait=` holds a request, so the waiters are capped per user and per process (`429 too_many_waiters`).
    @Test func waitersAreCappedPerUserAndPerProcess() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(
                server,
                configure: {
                    $0.userMaxWaiters = 1
                    $0.maxWaiters = 2
                }
            ) { client in
                func submit(_ user: String, _ index: Int, wait: Int) async throws -> TestResponse {
                    try await client.execute(
                        uri: "/v1/receipts?wait=\(wait)", method: .post, headers: try await IngestHarness.userHeaders(user),
                        body: ByteBuffer(string: #"{"receipt":"\#(Data("w \(index)".utf8).base64EncodedString())"}"#))
                }
                let held = Task { try await submit("alice", 1, wait: 3) }
                let alsoHeld = Task { try await submit("bob", 2, wait: 3) }
                try await Task.sleep(for: .milliseconds(800))
                let second = try await submit("alice", 3, wait: 3)
                #expect(second.status == .tooManyRequests)
                #expect(IngestHarness.errorCode(second) == "too_many_waiters")
                let third = try await submit("carol", 4, wait: 3)
                #expect(IngestHarness.errorCode(third) == "too_many_waiters", "the process holds its most waiters")
                // Without ?wait the same users are served.
                #expect(try await submit("carol", 5, wait: 0).status == .accepted)
                #expect(try await held.value.status == .accepted)
                #expect(try await alsoHeld.value.status == .accepted)
                #expect(try await submit("alice", 6, wait: 1).status == .accepted, "a finished wait frees its place")
            }
        }
    }
}
