import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport

@testable import Verification

/// What the reconcile and sweeper tests share: the real `fulfiller` binary applying to the ledger, the
/// catalog it uses, reconciler settings and ledger reads.
enum ReconcileTestSupport {
    static let user = "user-1"
    static let token = "7e3fb20b-4cdb-47cc-936d-99d65f608138"

    static let catalog = #"""
        {"products": [
          {"productId": "com.example.coins100", "type": "consumable", "coins": 100},
          {"productId": "com.example.vip.month", "type": "autoRenewable", "entitlement": "vip"}
        ]}
        """#

    /// API key settings plus a fast reconciler (`interval`), no sweep grace.
    static func settings(_ harness: VerifierHarness, interval: String = "300ms", extra: [String: String] = [:]) throws -> [String: String] {
        var settings = try harness.apiSettings()
        settings["TOLLGATE_RECONCILE_INTERVAL"] = interval
        settings["TOLLGATE_RECONCILE_START_DELAY"] = "0ms"
        settings["TOLLGATE_RECONCILE_LEASE"] = "10s"
        settings["TOLLGATE_SWEEP_GRACE"] = "0ms"
        settings.merge(extra) { _, new in new }
        return settings
    }

    /// Runs the real `fulfiller` executable against the harness's Redis while `body` runs.
    static func withFulfiller(_ harness: VerifierHarness, _ body: () async throws -> Void) async throws {
        let catalogURL = harness.sim.directory.appendingPathComponent("catalog.json")
        try catalog.write(to: catalogURL, atomically: true, encoding: .utf8)
        let fulfiller = try ChildProcess.start(
            "fulfiller",
            environment: [
                "TOLLGATE_REDIS_URL": harness.redisServer.url, "TOLLGATE_CATALOG": catalogURL.path,
                "TOLLGATE_METRICS_PORT": "0", "TOLLGATE_METRICS_HOST": "127.0.0.1", "TOLLGATE_CLAIM_INTERVAL_MS": "200",
                "LOG_LEVEL": "warning",
            ], log: harness.sim.directory.appendingPathComponent("fulfiller.log"))
        defer { fulfiller.kill() }
        try await body()
    }

    /// Maps the test token to the user, as ingest does when it creates an order (no order number: the
    /// token alone names the owner).
    static func bindToken(_ harness: VerifierHarness) async throws {
        _ = try await harness.redis.send("HSET", harness.keys.appAccountToken(token), Order.TokenField.user, user)
    }

    static func account(_ harness: VerifierHarness) async throws -> [String: String] {
        try await hash(harness, harness.keys.account(user: user))
    }

    static func appliedNotifications(_ harness: VerifierHarness) async throws -> Set<String> {
        let members = try await harness.redis.send("SMEMBERS", harness.keys.notifications(user: user)).array ?? []
        return Set(members.compactMap(\.string))
    }

    static func hash(_ harness: VerifierHarness, _ key: String) async throws -> [String: String] {
        try await harness.redis.hgetall(key)
    }

    /// The statuses of the jobs the sweeper handed to the fulfiller (`source` = `reconciler`): the fulfiller deletes
    /// the verified stream's entries it applied, their status hashes stay.
    static func sweptJobs(_ harness: VerifierHarness) async throws -> [JobStatus] {
        var swept: [JobStatus] = []
        for key in (try await harness.redis.send("KEYS", harness.keys.job("*")).array ?? []).compactMap(\.string) {
            let hash = try await harness.redis.hgetall(key)
            if hash["source"] == "reconciler", let status = JobStatus(jobID: String(key.split(separator: ":").last ?? ""), hash: hash) {
                swept.append(status)
            }
        }
        return swept
    }

    /// The `state` of every job's status hash.
    static func jobStates(_ harness: VerifierHarness) async throws -> [String] {
        var states: [String] = []
        for key in (try await harness.redis.send("KEYS", harness.keys.job("*")).array ?? []).compactMap(\.string) {
            states.append(try await hash(harness, key)["state"] ?? "")
        }
        return states
    }

    /// Waits for a successful pass that ended after `after`; returns its `pass.at` (0 if none came).
    static func nextPass(_ harness: VerifierHarness, after: Int64) async throws -> Int64 {
        var found: Int64 = 0
        _ = try await eventually {
            found = try await lastPass(harness) ?? 0
            return found > after
        }
        return found
    }

    /// The `pass.at` of the last successful pass.
    static func lastPass(_ harness: VerifierHarness) async throws -> Int64? {
        try await harness.redis.send("HGET", harness.keys.reconcileStatus, "pass.at").int
    }
}
