import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@Suite struct FulfillerConcurrencyTests {
    @Test func theSameEventTenTimesConcurrentlyBySeveralConsumersHasOneEffect() async throws {
        try await LedgerHarness.with { h in
            let tx = Fixture.transaction("dup", product: "coins100")
            for copy in 0..<10 { try await h.submit(Fixture.client("alice", [tx], job: "job\(copy)")) }
            var batches: [[LedgerHarness.Read]] = []
            for consumer in 0..<5 { batches.append(try await h.read("c\(consumer)", count: 2)) }
            #expect(batches.flatMap { $0 }.count == 10)
            let outcomes = try await withThrowingTaskGroup(of: LedgerOutcome.self) { group in
                for entry in batches.flatMap({ $0 }) { group.addTask { try await h.apply(entry) } }
                return try await group.reduce(into: [LedgerOutcome]()) { $0.append($1) }
            }
            let results = outcomes.compactMap { $0.transactions?.first?.result }
            #expect(results.filter { $0 == "applied" }.count == 1)
            #expect(results.filter { $0 == "duplicate" }.count == 9)
            #expect(try await h.coins("alice") == 100)
            #expect(try await h.events("alice").count == 1)
            #expect(try await h.pendingCount() == 0)
            for copy in 0..<10 { #expect(try await h.job("job\(copy)")?.state == .fulfilled) }
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    @Test func oneEntryRacedByTwoConsumersIsAppliedByOne() async throws {
        try await LedgerHarness.with { h in
            try await h.submit(Fixture.client("alice", [Fixture.transaction("race", product: "coins100")]))
            let entry = try #require(try await h.read("A").first)
            // B claims it while A still holds it (as after A's min-idle), and both apply at once.
            let claimed = try await h.redis.send(
                RedisCommand("XCLAIM", h.keys.verified(partition: entry.partition).stream, LedgerHarness.group, "B", 0, entry.id))
            #expect(claimed.array?.count == 1)
            async let first = h.apply(entry)
            async let second = h.apply(entry)
            let outcomes = try await [first, second].map(\.outcome.rawValue).sorted()
            #expect(outcomes == ["acked_elsewhere", "fulfilled"])
            #expect(try await h.coins("alice") == 100)
        }
    }

    @Test func twoFulfillerReplicasApplyADuplicatedLoadExactlyOnce() async throws {
        try await LedgerHarness.with { h in
            let users = (0..<20).map { "user\($0)" }
            for round in 0..<2 {  // every event submitted twice
                for (index, user) in users.enumerated() {
                    for n in 0..<5 {
                        try await h.submit(
                            Fixture.client(
                                user, [Fixture.transaction("u\(index)-\(n)", product: "coins100")],
                                job: "j\(round)-\(index)-\(n)"))
                    }
                }
            }
            let one = try await RunningFulfiller.start(h.server, keys: h.keys, consumer: "replica-1")
            let two = try await RunningFulfiller.start(h.server, keys: h.keys, consumer: "replica-2")
            let done = try await eventually {
                let pending = try await h.pendingCount()
                let undelivered = try await h.undeliveredCount()
                return pending == 0 && undelivered == 0
            }
            try await one.shutdown()
            try await two.shutdown()
            #expect(done)
            #expect(try await totalCoins(h, users: users) == 20 * 5 * 100)
            #expect(try await h.eventsCount() == 100)
            let report = try await h.audit()
            #expect(report.users == 20 && report.transactions == 100 && report.differences.isEmpty)
            #expect(try await h.job("j1-3-4")?.state == .fulfilled)
        }
    }
}
