import Foundation
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification

/// How a pass picks its window: an interrupted window is resumed (and read again from its start when Apple
/// no longer knows the stored page token); `onlyFailures` asks Apple for undelivered notifications only.
@Suite(.serialized)
struct ReconcileWindowTests {
    typealias Support = ReconcileTestSupport

    @Test func anInterruptedWindowIsResumedAndReadAgainWhenItsTokenIsUnknown() async throws {
        try await VerifierHarness.with { harness in
            for _ in 0..<3 { try await harness.sim.purchase() }
            let configuration = try VerifierConfiguration(environment: harness.environment(try Support.settings(harness)))
            let cursor = harness.keys.reconcileCursor(environment: "Production")
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let (start, end) = (now - 3_600_000, now - 1)
            // What a pass that died after its first page leaves behind, with a token Apple does not know.
            _ = try await harness.redis.send(
                RedisCommand(
                    "HSET", cursor, "window.start", start, "window.end", end, "window.failures", "0", "page.token", "stale"))

            let report = try await ReconcileOnce.run(configuration: configuration, arguments: .init(), logger: harness.logger)
            #expect(report.found == 3)
            #expect(report.enqueued == 3)
            let done = try await Support.hash(harness, cursor)
            #expect((Int64(done["checkpoint"] ?? "") ?? 0) > end)
            #expect(done["page.token"] == nil && done["window.start"] == nil)
        }
    }

    @Test func onlyFailuresStillFindsNotificationsThatWereNeverDelivered() async throws {
        try await VerifierHarness.with { harness in
            let first = try await harness.sim.purchase()
            try await harness.sim.purchase()
            let settings = try Support.settings(harness, extra: ["TOLLGATE_RECONCILE_ONLY_FAILURES": "true"])
            let configuration = try VerifierConfiguration(environment: harness.environment(settings))
            let report = try await ReconcileOnce.run(configuration: configuration, arguments: .init(), logger: harness.logger)
            #expect(report.found == 2)
            #expect(report.enqueued == 2)
            let uuid = try #require(first["notificationUUID"] as? String)
            let jobID = try #require(
                try await harness.redis.send("GET", harness.keys.reconcileSeen(notificationUUID: uuid, partition: 0)).string)
            let entry = try #require(try await harness.redis.xrange(harness.keys.jobs().stream).first { $0.string(Job.Field.id) == jobID })
            let job = try Job(entry: entry)
            #expect(job.kind == .notificationV2)
            #expect(job.source == .reconciler)
            #expect(String(decoding: job.payload, as: UTF8.self).contains(try #require(first["signedPayload"] as? String)))
        }
    }
}
