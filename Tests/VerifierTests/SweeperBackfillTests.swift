import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification

/// Subscriptions a ledger held before it kept the sweep index are put into it by the first pass, once.
@Suite(.serialized)
struct SweeperBackfillTests {
    static func member(_ user: String) -> String { #"["Production","vip",""# + user + #""]"# }

    @Test func firstPassIndexesExistingSubscriptionsOnce() async throws {
        try await VerifierHarness.with { harness in
            let keys = harness.keys
            let later = Int64(Date().timeIntervalSince1970 * 1000) + 20 * 86_400_000
            func subscriber(_ user: String, state: String, autoRenew: String) async throws {
                _ = try await harness.redis.send(
                    RedisCommand(
                        "HSET", keys.account(user: user), "ent:vip:state", state, "ent:vip:expires", later,
                        "ent:vip:autorenew", autoRenew, "ent:no_ads:state", "active"))
                _ = try await harness.redis.send(
                    RedisCommand(
                        "HSET", keys.entitlement(user: user, name: "vip"), "\(user)-1", "1,100,\(later - 30 * 86_400_000),0",
                        "\(user)-2", "1,200,\(later),0"))
                _ = try await harness.redis.send(
                    RedisCommand(
                        "HSET", keys.entitlement(user: user, name: "no_ads"), "\(user)-3", "1,300,0,0"))
                _ = try await harness.redis.send(
                    RedisCommand(
                        "HSET", keys.transaction(user: user, transactionId: "\(user)-2"), "env", "Production"))
            }
            try await subscriber("alice", state: "active", autoRenew: "1")
            try await subscriber("bob", state: "expired", autoRenew: "0")
            try await subscriber("carol", state: "expired", autoRenew: "1")
            let configuration = try VerifierConfiguration(environment: harness.environment(try ReconcileTestSupport.settings(harness)))

            let report = try await ReconcileOnce.run(configuration: configuration, arguments: .init(), logger: harness.logger)
            #expect(report.lines.contains("sweep index backfilled with 2 subscriptions"))
            let due = try await harness.redis.send("ZRANGE", keys.subscriptionsDue(), 0, -1, "WITHSCORES").array?.compactMap(\.string)
            #expect(due == [Self.member("alice"), String(later), Self.member("carol"), String(later)])
            #expect(try await harness.redis.send("HGET", keys.subscriptionsDueReference(), Self.member("alice")).string == "alice-2")

            _ = try await harness.redis.send("ZREM", keys.subscriptionsDue(), Self.member("alice"))
            let again = try await ReconcileOnce.run(configuration: configuration, arguments: .init(), logger: harness.logger)
            #expect(again.lines.isEmpty)
            #expect(try await harness.redis.send("ZSCORE", keys.subscriptionsDue(), Self.member("alice")).isNull)
        }
    }
}
