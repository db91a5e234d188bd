import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@Suite struct FulfillerCrashTests {
    @Test func anEntryAbandonedBetweenReadAndAckIsReclaimedAndAppliedOnce() async throws {
        try await LedgerHarness.with { h in
            try await h.submit(Fixture.client("alice", [Fixture.transaction("lost", product: "coins100")], job: "jobL"))
            // "ghost" reads the entry and dies before acking.
            let held = try #require(try await h.read("ghost").first)
            let replica = try await RunningFulfiller.start(h.server, keys: h.keys, consumer: "replica", claimMinIdle: .milliseconds(300))
            let applied = try await eventually { try await h.job("jobL")?.state == .fulfilled }
            try await replica.shutdown()
            #expect(applied)
            #expect(try await h.coins("alice") == 100)
            #expect(try await h.pendingCount() == 0)
            // The ghost comes back and finishes its stale work: refused by the XACK gate.
            #expect(try await h.apply(held).outcome == .ackedElsewhere)
            #expect(try await h.coins("alice") == 100)
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    @Test func aSigkilledFulfillerProcessLeavesEveryTransactionAppliedExactlyOnce() async throws {
        let binary = try ChildProcess.binaryURL("fulfiller")
        try await LedgerHarness.with { h in
            let users = (0..<40).map { "k\($0)" }
            let total = 4000
            for n in 0..<total {
                try await h.submit(Fixture.client(users[n % users.count], [Fixture.transaction("k-\(n)", product: "coins1")]))
            }
            let catalogPath = h.server.directory.appendingPathComponent("catalog.json").path
            let encoded = try JSONEncoder().encode(testCatalog)
            #expect(FileManager.default.createFile(atPath: catalogPath, contents: encoded))
            let process = try SpawnedProcess.spawn(
                binary, arguments: [],
                environment: h.serviceEnvironment.merging([
                    "TOLLGATE_CATALOG": catalogPath, "TOLLGATE_METRICS_PORT": "0",
                    "TOLLGATE_METRICS_HOST": "127.0.0.1", "LOG_LEVEL": "error", "TOLLGATE_FULFILLER_CONCURRENCY": "32",
                ]) { $1 })
            let started = try await eventually { try await h.eventsCount() >= 300 }
            process.send(SIGKILL)
            process.waitUntilExit()
            #expect(started)
            #expect(process.terminatedBySignal)
            let appliedBeforeKill = try await h.eventsCount()
            #expect(appliedBeforeKill < total)
            // The killed process held entries it had read but not acknowledged.
            #expect(try await h.pendingCount() > 0)

            // A replica takes over, reclaiming what the killed process held un-acked.
            let replica = try await RunningFulfiller.start(
                h.server, keys: h.keys, consumer: "survivor", claimMinIdle: .milliseconds(300),
                concurrency: 32)
            let done = try await eventually(timeout: .seconds(40)) {
                let applied = try await h.eventsCount()
                let pending = try await h.pendingCount()
                return applied >= total && pending == 0
            }
            try await replica.shutdown()
            #expect(done)
            #expect(try await h.eventsCount() == total)
            #expect(try await totalCoins(h, users: users) == Int64(total))
            let report = try await h.audit()
            #expect(report.transactions == total && report.differences.isEmpty)
        }
    }
}
