import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The real `fulfiller` executable's `/metrics`: entries the ledger function acknowledges itself are counted
/// as the runtime's `completed`, never as `abandoned` (which means "left pending for a reclaim").
@Suite struct FulfillerMetricsTests {
    /// The real `fulfiller` on the harness's Redis with the test catalog, its metrics on a free loopback port.
    static func startFulfiller(_ h: LedgerHarness, _ extra: [String: String] = [:]) throws -> (ChildProcess, Int) {
        let catalog = h.server.directory.appendingPathComponent("metrics-catalog.json")
        try JSONEncoder().encode(testCatalog).write(to: catalog)
        let port = try ChildProcess.freePort()
        let fulfiller = try ChildProcess.start(
            "fulfiller",
            environment: h.serviceEnvironment.merging([
                "TOLLGATE_CATALOG": catalog.path, "LOG_LEVEL": "error",
                "TOLLGATE_METRICS_HOST": "127.0.0.1", "TOLLGATE_METRICS_PORT": String(port),
            ]) { $1 }.merging(extra) { $1 }, log: h.server.directory.appendingPathComponent("fulfiller.log"))
        return (fulfiller, port)
    }

    @Test func ledgerAckedEntriesCountAsCompletedNotAbandoned() async throws {
        try await LedgerHarness.with { h in
            let (fulfiller, port) = try Self.startFulfiller(h)
            defer { fulfiller.kill() }
            try await h.submit(Fixture.client("alice", [Fixture.transaction("m1", product: "coins100")], job: "jobM1"))
            try await h.submit(Fixture.client("alice", [Fixture.transaction("m1", product: "coins100")], job: "jobM2"))
            let applied = try await eventually(timeout: .seconds(30)) {
                let coins = try await h.coins("alice")
                let pending = try await h.pendingCount()
                return coins == 100 && pending == 0
            }
            #expect(applied)

            // The operators' listener may start after the consumers have applied the jobs: ask until it answers.
            let readyURL = try #require(URL(string: "http://127.0.0.1:\(port)/readyz"))
            let ready = try #require(await eventuallyValue(timeout: .seconds(30)) { try? await URLSession.shared.data(from: readyURL) })
            #expect((ready.1 as? HTTPURLResponse)?.statusCode == 200, "\(String(decoding: ready.0, as: UTF8.self))")
            let url = try #require(URL(string: "http://127.0.0.1:\(port)/metrics"))
            var lines: [Substring] = []
            let counted = await eventually(timeout: .seconds(10)) {
                guard let (data, _) = try? await URLSession.shared.data(from: url) else { return false }
                lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
                return lines.contains { $0.hasPrefix("tollgate_jobs_total{") && $0.contains(#"outcome="completed""#) && $0.hasSuffix(" 2") }
            }
            #expect(counted, "\(lines.filter { $0.hasPrefix("tollgate_jobs_total") })")
            #expect(!lines.contains { $0.hasPrefix("tollgate_jobs_total{") && $0.contains(#"outcome="abandoned""#) })
            // The second event's transaction was already applied: a duplicate transaction, credited once.
            #expect(
                lines.contains {
                    $0.hasPrefix("tollgate_ledger_transactions_total{") && $0.contains(#"result="duplicate""#) && $0.hasSuffix(" 1")
                })
            #expect(await fulfiller.terminate(timeout: .seconds(15)))
        }
    }

    /// The real executable with `TOLLGATE_REPEAT_FREE_TRIAL=refuse`: a second free trial is withheld, and a promotional
    /// redemption without a signature is credited and counted as a fraud signal.
    @Test func withheldTrialsAndUnsignedOfferRedemptionsAreCounted() async throws {
        try await LedgerHarness.with { h in
            let (fulfiller, port) = try Self.startFulfiller(h, ["TOLLGATE_REPEAT_FREE_TRIAL": "refuse"])
            defer { fulfiller.kill() }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            func trial(_ tid: String, purchase: Int64) -> PurchaseEventTransaction {
                Fixture.transaction(
                    tid, product: "vip.month", purchase: purchase, expires: purchase + 7 * day, offerType: 1,
                    offerDiscountType: "FREE_TRIAL")
            }
            try await h.submit(Fixture.client("alice", [trial("t1", purchase: now - 60 * day)]))
            // The first trial first: the fulfiller applies concurrently.
            #expect(try await eventually(timeout: .seconds(30)) { try await h.entitlement("alice", "vip") != nil })
            try await h.submit(Fixture.client("alice", [trial("t2", purchase: now - day)]))
            try await h.submit(
                Fixture.client(
                    "bob",
                    [
                        Fixture.transaction(
                            "p1", product: "vip.month", purchase: now - day, expires: now + 29 * day, offerType: 2,
                            offerIdentifier: "winback50")
                    ]))
            let applied = try await eventually(timeout: .seconds(30)) {
                let pending = try await h.pendingCount()
                let undelivered = try await h.undeliveredCount()
                return pending == 0 && undelivered == 0
            }
            #expect(applied)
            #expect(try await h.entitlement("alice", "vip")?.state == "expired")
            // The pending count can read 0 before the fulfiller has read bob's entry at all: wait for his purchase.
            #expect(try await eventually(timeout: .seconds(30)) { try await h.entitlement("bob", "vip")?.state == "active" })

            let url = try #require(URL(string: "http://127.0.0.1:\(port)/metrics"))
            var lines: [Substring] = []
            let counted = await eventually(timeout: .seconds(10)) {
                guard let (data, _) = try? await URLSession.shared.data(from: url) else { return false }
                lines = String(decoding: data, as: UTF8.self).split(separator: "\n")
                return lines.contains {
                    $0.hasPrefix("tollgate_ledger_fraud_signals_total{") && $0.contains(#"reason="offer_unsigned""#) && $0.hasSuffix(" 1")
                }
            }
            #expect(counted, "\(lines.filter { $0.hasPrefix("tollgate_ledger") })")
            #expect(
                lines.contains {
                    $0.hasPrefix("tollgate_ledger_transactions_total{") && $0.contains(#"result="trial_withheld""#) && $0.hasSuffix(" 1")
                })
            #expect(await fulfiller.terminate(timeout: .seconds(15)))
        }
    }
}
