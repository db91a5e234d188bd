import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@Suite struct LedgerAuditTests {
    @Test func auditFindsNoDifferenceUntilABalanceIsCorruptedByHand() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("a1", product: "coins100", quantity: 2)]))
            try await h.deliver(Fixture.client("bob", [Fixture.transaction("b1", product: "coins2000")]))
            try await h.deliver(Fixture.notification("REFUND", [Fixture.transaction("b1", product: "coins2000", revoked: testNow)]))
            let clean = try await h.audit()
            #expect(clean.users == 2 && clean.transactions == 2 && clean.differences.isEmpty)

            _ = try await h.redis.send(RedisCommand("HINCRBY", h.keys.account(user: "alice"), "coins", 5))
            let corrupted = try await h.audit()
            #expect(corrupted.differences == [LedgerAudit.Difference(user: "alice", stored: 205, recomputed: 200)])
        }
    }
}
