import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@Suite struct LedgerParkingTests {
    @Test func aNotificationBeforeTheOwnerIsKnownIsParkedThenAppliedOnce() async throws {
        try await LedgerHarness.with { h in
            // Apple's renewal and a refund arrive before the app ever submitted the purchases.
            let renew = Fixture.notification(
                "DID_RENEW",
                [
                    Fixture.transaction(
                        "s2", product: "vip.month", otid: "s1", purchase: testNow, expires: testNow + 30 * day)
                ], job: "jobR")
            let parked = try await h.deliver(renew)
            #expect(parked.outcome == .parked)
            #expect(try await h.job("jobR")?.state == .fulfilled)
            let refund = Fixture.notification("REFUND", [Fixture.transaction("c1", product: "coins100", revoked: testNow)])
            #expect(try await h.deliver(refund).outcome == .parked)
            #expect(try await h.redis.send(RedisCommand("LLEN", h.keys.parked(originalTransactionId: "s1"))).int == 1)
            #expect(try await h.pendingCount() == 0)

            // The owner submits: the binding releases the parked events, which then apply.
            let submitted = try await h.deliver(
                Fixture.client(
                    "alice",
                    [
                        Fixture.transaction("s1", product: "vip.month", purchase: testNow - 30 * day, expires: testNow),
                        Fixture.transaction("c1", product: "coins100"),
                    ]))
            #expect(submitted.unparked == 2)
            #expect(try await h.coins("alice") == 100)
            let outcomes = try await h.drain()
            #expect(outcomes.map(\.outcome) == [.fulfilled, .fulfilled])
            #expect(try await h.coins("alice") == 0)
            #expect(try await h.hash(h.keys.account(user: "alice"))["ent:vip:expires"] == String(testNow + 30 * day))
            #expect(try await h.entitlement("alice", "vip")?.state == "active")
            #expect(try await h.redis.send(RedisCommand("EXISTS", h.keys.parked(originalTransactionId: "s1"))).int == 0)

            // Apple retries the refund: nothing changes.
            #expect(try await h.deliver(refund).outcome == .duplicate)
            #expect(try await h.coins("alice") == 0)
            #expect(try await h.drain().isEmpty)
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    @Test func aParkedEventReResolvesWhenTheBindingAppearsFirst() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("c9", product: "coins100")]))
            // Apple's notification of the same purchase resolves through the binding, without parking.
            let outcome = try await h.deliver(Fixture.notification("ONE_TIME_CHARGE", [Fixture.transaction("c9", product: "coins100")]))
            #expect(outcome.outcome == .fulfilled)
            #expect(outcome.transactions?.first?.result == "duplicate")
            #expect(try await h.coins("alice") == 100)
        }
    }

    @Test func aNotificationWithNothingToApplyIsFulfilledNotParked() async throws {
        try await LedgerHarness.with { h in
            let outcome = try await h.deliver(Fixture.notification("TEST", [], job: "jobT"))
            #expect(outcome.outcome == .fulfilled)
            #expect(try await h.job("jobT")?.state == .fulfilled)
            #expect(try await h.pendingCount() == 0)
        }
    }
}
