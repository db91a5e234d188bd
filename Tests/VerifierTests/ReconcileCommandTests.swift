import AppStore
import Foundation
import Pipeline
import Redis
import TestSupport
import Testing
@testable import Verification

/// `tollctl reconcile` (the real binary, which runs `verifier reconcile`): a dry run reports and changes
/// nothing; a real run enqueues and corrects; the checkpoint moves only when every page is enqueued.
@Suite(.serialized)
struct ReconcileCommandTests {
    typealias Support = ReconcileTestSupport

    /// Every key with its `DUMP`, so that any change to any value shows.
    static func snapshot(_ harness: VerifierHarness) async throws -> [String: [UInt8]] {
        var values: [String: [UInt8]] = [:]
        for key in (try await harness.redis.send("KEYS", "*").array ?? []).compactMap(\.string) {
            values[key] = try await harness.redis.send("DUMP", key).bytes ?? []
        }
        return values
    }

    /// A subscription the ledger believes ended, renewed silently at Apple: the sweep index, reference and
    /// transaction record as the fulfiller writes them.
    static func staleSubscription(_ harness: VerifierHarness) async throws {
        let vip = try await harness.sim.purchase([
            "productId": "com.example.vip.month", "type": "Auto-Renewable Subscription", "expiresInSeconds": 3600])
        let id = try #require(vip["transactionId"] as? String)
        let signed = try #require(vip["signedTransaction"] as? String)
        let expires = try #require(NotificationPeekTestView.expires(of: signed))
        try await harness.sim.post("/sim/events", ["type": "DID_RENEW", "transactionId": id, "notify": false])
        let member = #"["Production","vip","user-1"]"#
        _ = try await harness.redis.send("ZADD", harness.keys.subscriptionsDue, expires - 7_200_000, member)
        _ = try await harness.redis.send("HSET", harness.keys.subscriptionsDueReference, member, id)
        _ = try await harness.redis.send("HSET", harness.keys.transaction(user: Support.user, transactionId: id),
                                         "otid", id, "expires", expires, "state", "applied")
    }

    @Test func dryRunChangesNothingAndARealRunEnqueuesAndCorrects() async throws {
        try await VerifierHarness.with { harness in
            let coins = try await harness.sim.purchase()
            let coinsUUID = try #require(coins["notificationUUID"] as? String)
            try await Self.staleSubscription(harness)
            let environment = harness.environment(try Support.settings(harness))

            let before = try await Self.snapshot(harness)
            let dry = try await ChildProcess.run("tollctl", arguments: ["reconcile", "--dry-run"], environment: environment)
            #expect(dry.status == 0, "\(dry.output)")
            #expect(dry.output.contains("would enqueue notification \(coinsUUID)"))
            #expect(dry.output.contains("would_enqueue=2"))
            #expect(dry.output.contains("would_correct=1"))
            #expect(try await Self.snapshot(harness) == before)

            let real = try await ChildProcess.run("tollctl", arguments: ["reconcile"], environment: environment)
            #expect(real.status == 0, "\(real.output)")
            #expect(real.output.contains("enqueued notification \(coinsUUID)"))
            #expect(real.output.contains(" enqueued=2"))
            #expect(real.output.contains(" corrected=1"))
            #expect(try await Support.jobCount(harness) == 3)
            let events = try await harness.events()
            #expect(events.count == 1 && events.first?.source == .reconciler && events.first?.kind == .transaction)

            let again = try await ChildProcess.run("tollctl", arguments: ["reconcile", "--since", "2020-01-01"], environment: environment)
            #expect(again.status == 0, "\(again.output)")
            #expect(again.output.contains("seen=2"))
            #expect(again.output.contains(" enqueued=0"))
            #expect(try await Support.jobCount(harness) == 3)

            let bad = try await ChildProcess.run("tollctl", arguments: ["reconcile", "--since", "yesterday"], environment: environment)
            #expect(bad.status == 1)
            #expect(bad.output.contains("tollctl: error: invalid_argument: --since"))
        }
    }

    @Test func checkpointMovesOnlyWhenEveryPageIsEnqueued() async throws {
        try await VerifierHarness.with { harness in
            for _ in 0..<25 { try await harness.sim.purchase() }
            let configuration = try VerifierConfiguration(environment: harness.environment(try Support.settings(harness)))
            let cursor = harness.keys.reconcileCursor(environment: "Production")

            try await harness.sim.post("/sim/faults", ["target": "api", "status": 503, "times": 1000])
            await #expect(throws: ReconcileError.self) {
                try await ReconcileOnce.run(configuration: configuration, arguments: .init(), logger: harness.logger)
            }
            let failed = try await Support.hash(harness, cursor)
            #expect(failed["checkpoint"] == nil)
            #expect(failed["window.start"] != nil)
            #expect(try await Support.jobCount(harness) == 0)

            try await harness.sim.clearFaults()
            let report = try await ReconcileOnce.run(configuration: configuration, arguments: .init(), logger: harness.logger)
            #expect(report.found == 25)
            #expect(report.enqueued == 25)
            let done = try await Support.hash(harness, cursor)
            // The interrupted window was finished, then a fresh one ran to now.
            #expect((Int64(done["checkpoint"] ?? "") ?? 0) >= (Int64(failed["window.end"] ?? "") ?? .max))
            #expect(done["window.start"] == nil && done["page.token"] == nil)
            #expect(try await Support.jobCount(harness) == 25)

            let next = try await ReconcileOnce.run(configuration: configuration, arguments: .init(), logger: harness.logger)
            #expect(next.enqueued == 0)
            #expect(next.seen == 25)
            #expect(try await Support.jobCount(harness) == 25)
        }
    }
}
