import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@Suite struct LedgerRefundTests {
    @Test func refundThenReversalThenRefundAgainNetsCorrectly() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("r1", product: "coins100")]))
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("r2", product: "coins2000")]))
            #expect(try await h.coins("alice") == 2100)
            let refund = Fixture.notification("REFUND", [Fixture.transaction("r1", product: "coins100", revoked: testNow - 5000)])
            try await h.deliver(refund)
            #expect(try await h.coins("alice") == 2000)
            let replay = try await h.deliver(refund)  // Apple's retry of the same notification
            #expect(replay.outcome == .duplicate)
            #expect(try await h.coins("alice") == 2000)
            let reversal = Fixture.notification("REFUND_REVERSED", [Fixture.transaction("r1", product: "coins100")])
            try await h.deliver(reversal)
            #expect(try await h.coins("alice") == 2100)
            try await h.deliver(Fixture.notification("REFUND_REVERSED", [Fixture.transaction("r1", product: "coins100")]))
            #expect(try await h.coins("alice") == 2100)
            // A stale copy of the first refund (same revocation date, new delivery) changes nothing.
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("r1", product: "coins100", revoked: testNow - 5000)]))
            #expect(try await h.coins("alice") == 2100)
            try await h.deliver(Fixture.notification("REFUND", [Fixture.transaction("r1", product: "coins100", revoked: testNow)]))
            #expect(try await h.coins("alice") == 2000)
            let deltas = try await h.events("alice").filter { $0.string("transactionId") == "r1" }.compactMap { $0.string("delta") }
            #expect(deltas == ["100", "-100", "100", "-100"])
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    @Test func refundsMayDriveTheBalanceNegative() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("s1", product: "coins100")]))
            _ = try await h.redis.send(RedisCommand("HINCRBY", h.keys.account(user: "alice"), "coins", -70))  // spent
            try await h.deliver(Fixture.notification("REFUND", [Fixture.transaction("s1", product: "coins100", revoked: testNow)]))
            #expect(try await h.coins("alice") == -70)
        }
    }

    @Test func clampModeStopsAtZeroAndRecordsTheShortfall() async throws {
        try await LedgerHarness.with(clamp: true) { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("s1", product: "coins100")]))
            _ = try await h.redis.send(RedisCommand("HINCRBY", h.keys.account(user: "alice"), "coins", -70))  // spent
            try await h.deliver(Fixture.notification("REVOKE", [Fixture.transaction("s1", product: "coins100", revoked: testNow)]))
            #expect(try await h.coins("alice") == 0)
            let record = try await h.hash(h.keys.transaction(user: "alice", transactionId: "s1"))
            #expect(record["debited"] == "30" && record["shortfall"] == "70" && record["state"] == "refunded")
            #expect(try await h.hash(h.keys.ledgerMeta(user: "alice"))["shortfall"] == "70")
            #expect(try await h.events("alice").last?.string("shortfall") == "70")
            // Reversal gives back exactly what was taken.
            try await h.deliver(Fixture.notification("REFUND_REVERSED", [Fixture.transaction("s1", product: "coins100")]))
            #expect(try await h.coins("alice") == 30)
        }
    }

    @Test func aRevocationDateOnAReplayedTransactionReversesOnce() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("v1", product: "coins100")]))
            let revoked = Fixture.transaction("v1", product: "coins100", revoked: testNow - 1000)
            try await h.deliver(Fixture.client("alice", [revoked]))
            try await h.deliver(Fixture.client("alice", [revoked]))
            #expect(try await h.coins("alice") == 0)
            #expect(try await h.events("alice").count == 2)
        }
    }
}
