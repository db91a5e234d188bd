import Core
import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// `tollctl reconcile`, the real binary (which runs the `Verification` library's pass in-process): a dry run
/// reports and changes nothing; a real run enqueues and corrects; a bad `--since` is refused.
@Suite(.serialized)
struct ReconcileCommandTests {
    /// API key settings and a reconciler that looks at everything at once.
    static func settings(_ harness: StoreHarness) throws -> [String: String] {
        try harness.apiSettings().merging([
            "TOLLGATE_RECONCILE_START_DELAY": "0ms", "TOLLGATE_RECONCILE_LEASE": "10s", "TOLLGATE_SWEEP_GRACE": "0ms",
        ]) { _, new in new }
    }

    /// A signed transaction's `expiresDate`, read without verifying (the simulator made it).
    static func expires(of jws: String) -> Int64? {
        let parts = jws.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let expires = JSONValue.read(data)?["expiresDate"]?.int else { return nil }
        return Int64(expires)
    }

    /// Every key with its `DUMP`, so that any change to any value shows.
    static func snapshot(_ harness: StoreHarness) async throws -> [String: [UInt8]] {
        var values: [String: [UInt8]] = [:]
        for key in (try await harness.redis.send("KEYS", "*").array ?? []).compactMap(\.string) {
            values[key] = try await harness.redis.send("DUMP", key).bytes ?? []
        }
        return values
    }

    /// A subscription the ledger believes ended, renewed silently at Apple: the sweep index, reference and
    /// transaction record as the fulfiller writes them.
    static func staleSubscription(_ harness: StoreHarness) async throws {
        let vip = try await harness.sim.purchase([
            "productId": "com.example.vip.month", "type": "Auto-Renewable Subscription", "expiresInSeconds": 3600,
        ])
        let id = try #require(vip["transactionId"] as? String)
        let signed = try #require(vip["signedTransaction"] as? String)
        let expires = try #require(Self.expires(of: signed))
        try await harness.sim.post("/sim/events", ["type": "DID_RENEW", "transactionId": id, "notify": false])
        let member = #"["Production","vip","user-1"]"#
        _ = try await harness.redis.send("ZADD", harness.keys.subscriptionsDue(), expires - 7_200_000, member)
        _ = try await harness.redis.send("HSET", harness.keys.subscriptionsDueReference(), member, id)
        _ = try await harness.redis.send(
            "HSET", harness.keys.transaction(user: "user-1", transactionId: id),
            "otid", id, "expires", expires, "state", "applied")
    }

    @Test func dryRunChangesNothingAndARealRunEnqueuesAndCorrects() async throws {
        try await StoreHarness.with { harness in
            let coins = try await harness.sim.purchase()
            let coinsUUID = try #require(coins["notificationUUID"] as? String)
            try await Self.staleSubscription(harness)
            let environment = harness.environment(try Self.settings(harness))

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
            #expect(try await harness.jobCount() == 3)
            let events = try await harness.events()
            #expect(events.count == 1 && events.first?.source == .reconciler && events.first?.kind == .transaction)

            let again = try await ChildProcess.run("tollctl", arguments: ["reconcile", "--since", "2020-01-01"], environment: environment)
            #expect(again.status == 0, "\(again.output)")
            #expect(again.output.contains("seen=2"))
            #expect(again.output.contains(" enqueued=0"))
            #expect(try await harness.jobCount() == 3)

            let bad = try await ChildProcess.run("tollctl", arguments: ["reconcile", "--since", "yesterday"], environment: environment)
            #expect(bad.status == 1)
            #expect(bad.output.contains("tollctl: error: invalid_argument: --since"))
        }
    }
}
