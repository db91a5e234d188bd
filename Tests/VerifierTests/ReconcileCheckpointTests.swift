import AppStore
import Foundation
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification

/// A reconcile pass (`ReconcileOnce`, what `tollctl reconcile` runs in-process): the checkpoint moves only
/// when every page is enqueued.
@Suite(.serialized)
struct ReconcileCheckpointTests {
    typealias Support = ReconcileTestSupport

    @Test func checkpointMovesOnlyWhenEveryPageIsEnqueued() async throws {
        try await VerifierHarness.with { harness in
            for _ in 0..<25 { try await harness.sim.purchase() }
            let configuration = try VerifierConfiguration(environment: harness.environment(try Support.settings(harness)))
            let cursor = harness.keys.reconcileCursor(environment: "Production")

            try await harness.sim.post("/sim/faults", ["target": "api", "status": 503, "times": 1000])
            await #expect(throws: VerificationError.self) {
                try await ReconcileOnce.run(configuration: configuration, arguments: .init(), logger: harness.logger)
            }
            let failed = try await Support.hash(harness, cursor)
            #expect(failed["checkpoint"] == nil)
            #expect(failed["window.start"] != nil)
            #expect(try await harness.jobCount() == 0)

            try await harness.sim.clearFaults()
            let report = try await ReconcileOnce.run(configuration: configuration, arguments: .init(), logger: harness.logger)
            #expect(report.found == 25)
            #expect(report.enqueued == 25)
            let done = try await Support.hash(harness, cursor)
            // The interrupted window was finished, then a fresh one ran to now.
            #expect((Int64(done["checkpoint"] ?? "") ?? 0) >= (Int64(failed["window.end"] ?? "") ?? .max))
            #expect(done["window.start"] == nil && done["page.token"] == nil)
            #expect(try await harness.jobCount() == 25)

            let next = try await ReconcileOnce.run(configuration: configuration, arguments: .init(), logger: harness.logger)
            #expect(next.enqueued == 0)
            #expect(next.seen == 25)
            #expect(try await harness.jobCount() == 25)
        }
    }
}
