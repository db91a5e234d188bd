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
}
