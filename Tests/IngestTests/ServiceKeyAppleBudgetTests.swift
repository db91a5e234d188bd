import Core
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Pipeline
import Redis
import TestSupport
import Testing

@testable import ingest

/// Issue 42 item 3: a service key's calls that ask Apple (`GET /v1/lookup?orderId=`, `POST /v1/admin/apple/…`) need
/// `lookup` (a look-up) or `admin`, and are bounded per key: a request rate and a cap on the key's unfinished jobs,
/// answered `429` with a stable code and `Retry-After`, and a backlog budget of their own, apart from the app users'.
/// No verifier runs here: every job the calls make stays unfinished.
@Suite struct ServiceKeyAppleBudgetTests {
    static let readKey = "budget-read-key-0123456789abcdefghijklmnop"
    static let lookupKey = "budget-lookup-key-0123456789abcdefghijklmn"
    static let adminKey = "budget-admin-key-0123456789abcdefghijklmno"

    static func keys(_ configuration: inout IngestConfiguration) throws {
        configuration.serviceKeys += [
            try ServiceKey(entry: "reader:read:\(readKey)"),
            try ServiceKey(entry: "support:read+lookup:\(lookupKey)"),
            try ServiceKey(entry: "ops:admin:\(adminKey)"),
        ]
    }

    static func lookUp(_ client: any TestClientProtocol, _ orderId: String, key: String) async throws -> TestResponse {
        try await client.execute(uri: "/v1/lookup?orderId=\(orderId)", method: .get, headers: try IngestHarness.apiKeyHeaders(key))
    }

    /// The value of `tollgate_ingest_rejects_total{reason}` on the app's `/metrics`; nil when never counted.
    static func rejects(_ client: any TestClientProtocol, _ reason: String) async throws -> Double? {
        let text = String(buffer: try await client.execute(uri: "/metrics", method: .get).body)
        let line = text.split(separator: "\n").first { $0.hasPrefix(#"tollgate_ingest_rejects_total{reason="\#(reason)"}"#) }
        return line?.split(separator: " ").last.flatMap { Double($0) }
    }

    /// A `read` key reads the ledger's look-ups but no longer asks Apple: `403 missing_scope`, and no job is made.
    @Test func aReadKeyCannotAskApple() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server, configure: Self.keys) { client in
                let refused = try await Self.lookUp(client, "MREADONLY1", key: Self.readKey)
                #expect(refused.status == .forbidden, "\(String(buffer: refused.body))")
                #expect(IngestHarness.errorCode(refused) == "missing_scope")
                // Its ledger look-ups still answer.
                let ledger = try await client.execute(
                    uri: "/v1/lookup?originalTransactionId=2000000123", method: .get,
                    headers: try IngestHarness.apiKeyHeaders(Self.readKey))
                #expect(ledger.status == .notFound && IngestHarness.errorCode(ledger) == "not_found")
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                #expect(try await redis.send(RedisCommand("XLEN", Keys(prefix: "tg").jobs().stream)).int == 0)
            }
        }
    }

    /// `lookup` and `admin` may ask Apple for an order.
    @Test func lookupAndAdminKeysMayAskApple() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server, configure: Self.keys) { client in
                for (key, order) in [(Self.lookupKey, "MLOOKUP001"), (Self.adminKey, "MADMIN0001")] {
                    let accepted = try await Self.lookUp(client, order, key: key)
                    #expect(accepted.status == .accepted, "\(String(buffer: accepted.body))")
                    #expect(IngestHarness.json(accepted)["jobId"]?.string != nil)
                }
            }
        }
    }

    /// A key flooding look-ups of new order ids is refused past its budget, `429` with a stable code and
    /// `Retry-After`, long before the 300 jobs (and Apple calls) it asked for.
    @Test func aKeyFloodingLookUpsIsRefusedPastItsBudget() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server, configure: Self.keys) { client in
                var accepted = 0
                var refused: [TestResponse] = []
                for index in 0..<60 {
                    let response = try await Self.lookUp(client, "MFLOOD\(index)", key: Self.adminKey)
                    if response.status == .accepted { accepted += 1 } else { refused.append(response) }
                }
                #expect(accepted <= 20, "\(accepted) look-ups queued")
                #expect(refused.count >= 40)
                for response in refused {
                    #expect(response.status == .tooManyRequests)
                    #expect(
                        ["key_rate_limited", "key_too_many_in_flight"].contains(IngestHarness.errorCode(response)),
                        "\(String(buffer: response.body))")
                    #expect(Int(response.headers[.retryAfter] ?? "") ?? 0 >= 1)
                }
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                #expect(try await redis.send(RedisCommand("XLEN", Keys(prefix: "tg").jobs().stream)).int == Int64(accepted))
            }
        }
    }

    /// A key's unfinished jobs are capped (`429 key_too_many_in_flight`, `Retry-After`), nothing more queued; a
    /// finished job frees its place; another key has its own cap.
    @Test func aKeysUnfinishedJobsAreCapped() async throws {
        try await withRedisServer { server in
            let configure: (inout IngestConfiguration) throws -> Void = { configuration in
                try Self.keys(&configuration)
                configuration.serviceKeyLimits.standard = .init(ratePerSecond: 1000, burst: 1000, maxInFlight: 3)
            }
            try await IngestHarness.withApp(server, configure: configure) { client in
                var jobIDs: [String] = []
                for index in 0..<3 {
                    let accepted = try await Self.lookUp(client, "MCAP\(index)", key: Self.lookupKey)
                    #expect(accepted.status == .accepted)
                    jobIDs.append(try #require(IngestHarness.json(accepted)["jobId"]?.string))
                }
                let refused = try await Self.lookUp(client, "MCAP3", key: Self.lookupKey)
                #expect(refused.status == .tooManyRequests)
                #expect(IngestHarness.errorCode(refused) == "key_too_many_in_flight", "\(String(buffer: refused.body))")
                #expect(refused.headers[.retryAfter] == "1")
                // Counted once, by its code.
                let inFlightRejects = try await Self.rejects(client, "key_too_many_in_flight")
                #expect(inFlightRejects == 1)
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let keys = Keys(prefix: "tg")
                #expect(try await redis.send(RedisCommand("XLEN", keys.jobs().stream)).int == 3)
                // The same call again is the same job, not another.
                #expect(try await Self.lookUp(client, "MCAP0", key: Self.lookupKey).status == .accepted)
                // Another key has its own cap.
                #expect(try await Self.lookUp(client, "MCAP4", key: Self.adminKey).status == .accepted)
                // Once the verifier has finished one of the key's jobs, the key may make another.
                let done = jobIDs[0]
                let partition = try #require(keys.partition(ofJob: done))
                _ = try await redis.send(
                    RedisCommand("HSET", key: keys.job(done, partition: partition), "state", JobState.fulfilled.rawValue))
                #expect(try await Self.lookUp(client, "MCAP5", key: Self.lookupKey).status == .accepted)
                #expect(try await Self.lookUp(client, "MCAP6", key: Self.lookupKey).status == .tooManyRequests)
            }
        }
    }

    /// A key's rate, set for it alone (`TOLLGATE_SERVICE_KEY_LIMITS`): past its burst `429 key_rate_limited` with the
    /// wait until its next token; other keys keep theirs.
    @Test func aKeysRateIsItsOwn() async throws {
        try await withRedisServer { server in
            let configure: (inout IngestConfiguration) throws -> Void = { configuration in
                try Self.keys(&configuration)
                configuration.serviceKeyLimits.perKey["support"] = .init(ratePerSecond: 0.1, burst: 2, maxInFlight: 0)
            }
            try await IngestHarness.withApp(server, configure: configure) { client in
                #expect(try await Self.lookUp(client, "MRATE0", key: Self.lookupKey).status == .accepted)
                #expect(try await Self.lookUp(client, "MRATE1", key: Self.lookupKey).status == .accepted)
                let refused = try await Self.lookUp(client, "MRATE2", key: Self.lookupKey)
                #expect(refused.status == .tooManyRequests)
                #expect(IngestHarness.errorCode(refused) == "key_rate_limited", "\(String(buffer: refused.body))")
                #expect((5...10).contains(Int(refused.headers[.retryAfter] ?? "") ?? 0), "\(refused.headers)")
                let rateRejects = try await Self.rejects(client, "key_rate_limited")
                #expect(rateRejects == 1)
                #expect(try await Self.lookUp(client, "MRATE3", key: Self.adminKey).status == .accepted)
            }
        }
    }

    /// Service keys' jobs draw on a backlog budget of their own: at its end they are answered `503 overloaded`, while an
    /// app user's submission is still taken; they are counted apart from the users' (`service.jobs` in the backlog).
    @Test func serviceKeysHaveABacklogBudgetApartFromTheUsers() async throws {
        try await withRedisServer { server in
            let configure: (inout IngestConfiguration) throws -> Void = { configuration in
                try Self.keys(&configuration)
                configuration.serviceKeyLimits.standard = .init(ratePerSecond: 1000, burst: 1000, maxInFlight: 0)
                configuration.maxBacklogService = 2
            }
            try await IngestHarness.withApp(server, configure: configure) { client in
                #expect(try await Self.lookUp(client, "MBACK0", key: Self.adminKey).status == .accepted)
                #expect(try await Self.lookUp(client, "MBACK1", key: Self.lookupKey).status == .accepted)
                let full = try await Self.lookUp(client, "MBACK2", key: Self.adminKey)
                #expect(full.status == .serviceUnavailable)
                #expect(IngestHarness.errorCode(full) == "overloaded")
                let user = try await client.execute(
                    uri: "/v1/receipts", method: .post, headers: try await IngestHarness.userHeaders("alice"),
                    body: AbuseBoundsTests.receipt(1))
                #expect(user.status == .accepted, "\(String(buffer: user.body))")
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let keys = Keys(prefix: "tg")
                let backlog = try await redis.hgetall(keys.backlog())
                #expect(backlog["service.jobs"] == "2" && backlog["client.jobs"] == "1", "\(backlog)")
                // A finished service key's job is taken off the service keys' budget (`job.budget`), not the users':
                // acknowledged as the verifier does.
                try await PipelineFunctions.library.load(on: redis)
                _ = try await redis.send(RedisCommand("XGROUP", "CREATE", keys.jobs().stream, "verifiers", "0"), timeout: nil)
                let entry = try #require(
                    try await redis.xreadgroup(
                        group: "verifiers", consumer: "v", stream: keys.jobs().stream, id: ">", count: 1, block: nil
                    ).first)
                #expect(entry.string("job.budget") == "service")
                #expect(
                    try await PipelineFunctions.ackWrite(
                        on: redis, stream: keys.jobs().stream, group: "verifiers", id: entry.id,
                        writes: Job.backlogRelease(of: entry, keys: keys)))
                let released = try await redis.hgetall(keys.backlog())
                #expect(released["service.jobs"] == "1" && released["client.jobs"] == "1", "\(released)")
                #expect(try await Self.lookUp(client, "MBACK2", key: Self.adminKey).status == .accepted)
            }
        }
    }
}
