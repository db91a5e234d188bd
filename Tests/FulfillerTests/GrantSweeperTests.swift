import Core
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@testable import fulfiller

/// The fulfiller sweeps grants past their `until` (issue 31, item 5): a running replica removes them and writes
/// `grant.expired`, and leaves grants that have not ended.
@Suite struct GrantSweeperTests {
    @Test func aRunningFulfillerExpiresGrantsPastTheirEnd() async throws {
        try await LedgerHarness.with { h in
            let ended = try await LedgerGrants.grant(
                LedgerGrants.Request(user: "alice", entitlement: "vip", until: testNow - 1, reason: "trial", by: "ops", now: testNow - day),
                keys: h.keys, on: h.redis)
            let running = try await LedgerGrants.grant(
                LedgerGrants.Request(user: "bob", entitlement: "vip", until: testNow + day, reason: "trial", by: "ops", now: testNow - day),
                keys: h.keys, on: h.redis)
            let replica = try await RunningFulfiller.start(h.server, keys: h.keys, consumer: "replica")  // clock: testNow
            let gone = await eventually {
                (try? await LedgerGrants.list(user: "alice", keys: h.keys, on: h.redis).isEmpty) == true
            }
            try await replica.shutdown()
            #expect(gone)
            #expect(try await h.events("alice").last?.string("event.type") == "grant.expired")
            #expect(try await LedgerGrants.list(user: "bob", keys: h.keys, on: h.redis).map(\.grantId) == [running.grant.grantId])
            #expect(ended.grant.grantId != running.grant.grantId)
        }
    }

    /// Issue 33: a project's grants end too. The games project's alice's grant past its `until` is removed by a running
    /// fulfiller that has the project's catalog, its `grant.expired` event carries the project, and the default
    /// project's alice (another user) keeps hers.
    @Test func aGamesProjectsGrantExpiresWithItsProjectsKeys() async throws {
        try await LedgerHarness.with { h in
            let games = h.keys.inProject(ProjectID("games")!)
            _ = try await LedgerGrants.grant(
                LedgerGrants.Request(user: "alice", entitlement: "vip", until: testNow - 1, reason: "trial", by: "ops", now: testNow - day),
                keys: games, on: h.redis)
            let kept = try await LedgerGrants.grant(
                LedgerGrants.Request(
                    user: "alice", entitlement: "vip", until: testNow + day, reason: "trial", by: "ops", now: testNow - day),
                keys: h.keys, on: h.redis)
            #expect(try await h.redis.send("ZCARD", games.grantsDue(partition: games.partition(ofUser: "alice"))).int == 1)
            let replica = try await RunningFulfiller.start(
                h.server, keys: h.keys, consumer: "replica", projectCatalogs: [ProjectID("games")!: testCatalog])
            let gone = await eventually {
                (try? await LedgerGrants.list(user: "alice", keys: games, on: h.redis).isEmpty) == true
            }
            try await replica.shutdown()
            #expect(gone)
            #expect(try await h.redis.send("ZCARD", games.grantsDue(partition: games.partition(ofUser: "alice"))).int == 0)
            let expired = try await h.events("alice").filter { $0.string("event.type") == "grant.expired" }
            #expect(expired.count == 1 && expired.first?.string("project") == "games", "\(expired)")
            #expect(expired.first?.string("event")?.contains(#""project":"games""#) == true)
            #expect(try await LedgerGrants.list(user: "alice", keys: h.keys, on: h.redis).map(\.grantId) == [kept.grant.grantId])
        }
    }
}
