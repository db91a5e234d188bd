import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// The ledger on a real 6-node Redis Cluster with sixteen partitions, through ``RedisClusterClient``: every call is
/// one slot (the client refuses any other before sending), and the Functions run on every primary.
@Suite("Ledger on Redis Cluster", .serialized)
struct LedgerClusterTests {
    @Test func purchasesRefundsParkingAndTheThiefsRaceHoldOnACluster() async throws {
        try await withRedisCluster { cluster in
            try await LedgerHarness.on(cluster, prefix: "c1") { h in
                let keys = h.keys
                // Eight users and eight purchases whose chains spread over the partitions, hence over the primaries.
                let users = (0..<8).map { LedgerPartitionTests.user(in: Partition($0 * 2), keys, "buyer") }
                let otids = (0..<8).map { LedgerPartitionTests.chain(notIn: Partition($0 * 2), keys, from: 5_000_000 + 1000 * $0) }
                for (user, otid) in zip(users, otids) {
                    let bought = try await h.deliver(Fixture.client(user, [Fixture.transaction(otid, product: "coins100")]))
                    #expect(bought.outcome == .fulfilled, "\(bought)")
                }
                // Apple's refunds start in the chains' partitions and are handed to their owners'.
                for otid in otids.prefix(4) {
                    let refund = Fixture.notification("REFUND", [Fixture.transaction(otid, product: "coins100", revoked: testNow)])
                    let outcome = try await h.deliver(refund)
                    #expect(outcome.transactions?.map(\.result) == ["refunded"], "\(outcome)")
                }
                for (index, user) in users.enumerated() {
                    #expect(try await h.coins(user) == (index < 4 ? 0 : 100), "\(user)")
                }

                // A renewal notified before the app submitted the purchase: parked, then applied once claimed.
                let owner = LedgerPartitionTests.user(in: 9, keys, "late")
                let chain = LedgerPartitionTests.chain(notIn: 9, keys, from: 6_000_000)
                let renew = Fixture.notification(
                    "DID_RENEW",
                    [Fixture.transaction("\(chain)-2", product: "vip.month", otid: chain, purchase: testNow, expires: testNow + 30 * day)])
                #expect(try await h.deliver(renew).outcome == .parked)
                let claimed = try await h.deliver(
                    Fixture.client(
                        owner, [Fixture.transaction(chain, product: "vip.month", purchase: testNow - 30 * day, expires: testNow)]))
                #expect(claimed.outcome == .fulfilled && claimed.unparked == 1, "\(claimed)")
                #expect(try await h.drain().map(\.outcome) == [.fulfilled])
                #expect(try await h.entitlement(owner, "vip")?.state == "active")

                // With a replica required for each cross-partition step (every primary has one): credited as before.
                var waiting = h.applier
                waiting.durability = LedgerApplier.Durability(replicas: 1, timeoutMilliseconds: 2000)
                let durableBuyer = LedgerPartitionTests.user(in: 12, keys, "durable")
                let durableChain = LedgerPartitionTests.chain(notIn: 12, keys, from: 6_500_000)
                try await h.submit(Fixture.client(durableBuyer, [Fixture.transaction(durableChain, product: "coins100")]))
                for read in try await h.read() {
                    #expect(try await waiting.apply(entry: read.entry, partition: read.partition).outcome == .fulfilled)
                }
                #expect(try await h.coins(durableBuyer) == 100)

                // The thief's race, across primaries.
                let alice = LedgerPartitionTests.user(in: 1, keys, "alice")
                let eve = LedgerPartitionTests.user(in: 14, keys, "eve")
                let contested = (0..<6).map { LedgerPartitionTests.chain(notIn: 1, keys, from: 7_000_000 + 1000 * $0) }
                for otid in contested {
                    try await h.submit(Fixture.client(alice, [Fixture.transaction(otid, product: "coins100")]))
                    try await h.submit(Fixture.client(eve, [Fixture.transaction(otid, product: "coins100")]))
                }
                let outcomes = try await LedgerPartitionTests.applyConcurrently(try await h.read(), h)
                #expect(outcomes.filter { $0.outcome == .fulfilled }.count == contested.count)
                _ = try await h.drain()
                let alices = try await h.coins(alice)
                let eves = try await h.coins(eve)
                #expect(alices + eves == Int64(100 * contested.count))
                #expect(try await h.pendingCount() == 0)
                // The audit finds every user on every primary and no difference.
                let report = try await h.audit()
                // The buyers, the late owner, the durable buyer, and whichever racers won a chain (a refused claim writes no account).
                #expect(report.users == users.count + 2 + (alices > 0 ? 1 : 0) + (eves > 0 ? 1 : 0))
                #expect(report.differences.isEmpty)
            }
            // The sixteen range-aligned partitions put ledger calls on every primary.
            let primaries = Set(try await cluster.slotMap().primaries.compactMap { $0 })
            #expect(primaries.count == 3)
            for primary in primaries {
                let stats = try await cluster.send(to: primary.port, "INFO", "commandstats").string ?? ""
                #expect(Self.calls("fcall", in: stats) > 10, "FCALLs on \(primary)")
            }
        }
    }

    /// The `calls=` count of a command in `INFO commandstats`.
    static func calls(_ command: String, in stats: String) -> Int {
        guard let line = stats.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("cmdstat_\(command):") }),
            let field = line.split(separator: ",").first?.split(separator: "=").last
        else { return 0 }
        return Int(field) ?? 0
    }
}
