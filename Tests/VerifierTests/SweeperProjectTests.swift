import AppStore
import Core
import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification

/// Issue 33 (docs/PROJECTS.md): the subscription sweeper reads every project's sweep index. A subscription of the
/// project `games`, due in `tg:games:{p0}:subs:due`, is looked up with the games keys (its record, its reference),
/// Apple's renewal goes to the fulfiller as an event of the project `games`, and the member is postponed in the games
/// index; the default project's index is not touched.
@Suite(.serialized)
struct SweeperProjectTests {
    typealias Support = ReconcileTestSupport

    @Test func aGamesSubscriptionIsSweptWithTheGamesKeys() async throws {
        try await VerifierHarness.with { harness in
            let games = ProjectID("games")!
            let keys = harness.keys.inProject(games)
            let vip = try await harness.sim.purchase([
                "productId": "com.example.vip.month", "type": "Auto-Renewable Subscription", "expiresInSeconds": 3600,
            ])
            let id = try #require(vip["transactionId"] as? String)
            let signed = try #require(vip["signedTransaction"] as? String)
            let expires = try #require(NotificationPeekTestView.expires(of: signed))
            try await harness.sim.post("/sim/events", ["type": "DID_RENEW", "transactionId": id, "notify": false])
            // What the fulfiller writes for a games subscription the ledger believes ended: under the games keys only.
            let member = #"["Production","vip","alice"]"#
            let due = expires - 7_200_000
            _ = try await harness.redis.send("ZADD", keys.subscriptionsDue(), due, member)
            _ = try await harness.redis.send("HSET", keys.subscriptionsDueReference(), member, id)
            _ = try await harness.redis.send(
                "HSET", keys.transaction(user: "alice", transactionId: id), "otid", id, "expires", expires, "state", "applied")
            let settings = try Support.settings(harness)
            var configuration = try VerifierConfiguration(environment: harness.environment(settings))
            let app = try #require(harness.environment(settings)["TOLLGATE_BUNDLE_ID"])
            configuration.projects = [ConfiguredProject(id: .default, bundleIds: []), ConfiguredProject(id: games, bundleIds: [app])]
            let report = try await ReconcileOnce.run(configuration: configuration, arguments: .init(), logger: harness.logger)
            #expect(report.due == 1)
            #expect(report.corrected == 1, "\(report)")

            let verified = try await harness.redis.xrange(harness.keys.verified().stream)
            #expect(verified.count == 1)
            let event = try PurchaseEvent.decode(try #require(verified.first?.fields[PurchaseEvent.streamField]))
            #expect(event.project == "games" && event.kind == .transaction, "\(event)")
            // Postponed in the index it was read from; nothing written to the default project's.
            let next = try await harness.redis.send("ZSCORE", keys.subscriptionsDue(), member).string.flatMap { Int64($0) }
            #expect((next ?? 0) > due)
            #expect(try await harness.redis.send("EXISTS", harness.keys.subscriptionsDue()).int == 0)
        }
    }
}
