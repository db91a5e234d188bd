import Foundation
import Redis
import TestSupport
import Testing

/// Issue 42 item 3: `tollctl`'s own calls of Apple take their app's fleet-wide token of their endpoint class, as the
/// verifier's do (SECURITY.md, "Calls to Apple"). The real binary against the real simulator and Redis, with a small
/// bucket (`TOLLGATE_API_RATE_SCALE_PERCENT=1`: Look Up Order ID and the rest of class `other` at 0.5/s, one token):
/// after each command, the bucket its call took from is in Redis, emptied.
@Suite(.serialized)
struct OperatorFleetBudgetTests {
    /// The tokens left in the fleet-wide bucket of `endpointClass` (production, any app); nil when no call took one.
    static func tokensLeft(_ harness: StoreHarness, _ endpointClass: String) async throws -> Double? {
        let found = try await harness.redis.send("KEYS", "*{rl:\(endpointClass)}:production*").array ?? []
        guard let key = found.first?.string else { return nil }
        return try await harness.redis.send("HGET", key, "tokens").string.flatMap(Double.init)
    }

    static func tollctl(_ harness: StoreHarness, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        try await ChildProcess.run(
            "tollctl", arguments: arguments,
            environment: harness.environment(try harness.apiSettings().merging(["TOLLGATE_API_RATE_SCALE_PERCENT": "1"]) { _, new in new }))
    }

    @Test func lookupTakesTheFleetToken() async throws {
        try await StoreHarness.with { harness in
            let sold = try await harness.sim.purchase()
            let orderId = try #require(sold["orderId"] as? String)
            #expect(try await Self.tokensLeft(harness, "other") == nil)
            let run = try await Self.tollctl(harness, ["lookup", orderId])
            #expect(run.status == 0, "\(run.output)")
            let left = try #require(try await Self.tokensLeft(harness, "other"), "Look Up Order ID took no fleet token")
            #expect(left < 0.9)
        }
    }

    @Test func extendTakesTheFleetToken() async throws {
        try await StoreHarness.with { harness in
            let bought = try await harness.sim.purchase([
                "productId": "com.example.vip.month", "type": "Auto-Renewable Subscription", "expiresInSeconds": 3600,
            ])
            let original = try #require(bought["transactionId"] as? String)
            let run = try await Self.tollctl(harness, ["apple", "extend", original, "--days", "3"])
            #expect(run.status == 0, "\(run.output)")
            let left = try #require(try await Self.tokensLeft(harness, "other"), "the extension took no fleet token")
            #expect(left < 0.9)
        }
    }

    @Test func setAccountTokenTakesTheFleetTokens() async throws {
        try await StoreHarness.with { harness in
            let bought = try await harness.sim.purchase([
                "productId": "com.example.vip.month", "type": "Auto-Renewable Subscription", "expiresInSeconds": 3600,
            ])
            let original = try #require(bought["transactionId"] as? String)
            let run = try await Self.tollctl(harness, ["apple", "set-account-token", original, "--user", "budget-user"])
            #expect(run.status == 0, "\(run.output)")
            // Get Transaction Info (before and after) and Set App Account Token, each from its own class's bucket.
            #expect(try await Self.tokensLeft(harness, "transactionInfo") != nil, "Get Transaction Info took no fleet token")
            let left = try #require(try await Self.tokensLeft(harness, "other"), "Set App Account Token took no fleet token")
            #expect(left < 0.9)
        }
    }
}
