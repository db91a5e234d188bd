import AppStore
import Foundation
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification

/// Retries, dead letters, redrive and crash recovery against a real redis-server and `appstore-sim`.
@Suite(.serialized)
struct VerifierRetryTests {
    @Test func transientAppleFaultsAreRetriedWithGrowingDelaysUntilTheyClear() async throws {
        try await VerifierHarness.with { harness in
            let receipt = try #require(try await harness.sim.purchase()["receipt"] as? String)
            // Attempt 1: status 21005; attempt 2: HTTP 503; attempt 3: no answer within the 500 ms timeout.
            try await harness.sim.post("/sim/faults", ["target": "verifyReceipt", "status": 21005, "times": 1])
            try await harness.sim.post("/sim/faults", ["target": "verifyReceipt", "status": 503, "times": 1])
            try await harness.sim.post("/sim/faults", ["target": "verifyReceipt", "delayMs": 1500, "times": 1])
            try await harness.withVerifier(["TOLLGATE_APPLE_TIMEOUT_MS": "500"]) { _ in
                let jobID = try await harness.enqueue(kind: .receipt, payload: receipt)
                let policy = RetryPolicy(base: .milliseconds(50), cap: .milliseconds(400), maxAttempts: 10)
                var seen: [Int: (reason: String, delay: Int64)] = [:]
                let deadline = ContinuousClock.now + .seconds(20)
                while ContinuousClock.now < deadline {
                    let status = try await harness.status(jobID)
                    if status["state"] == "retrying", let attempt = status["attempt"].flatMap(Int.init),
                        let next = status["next.at"].flatMap(Int64.init), let updated = status["updated.at"].flatMap(Int64.init)
                    {
                        seen[attempt] = (status["reason"] ?? "", next - updated)
                    }
                    if status["verified.at"] != nil { break }
                    try await Task.sleep(for: .milliseconds(5))
                }
                let events = try await harness.waitForEvents(1)
                #expect(events.count == 1)
                // Retrying states are short-lived (tens of ms), so each is checked when it was seen.
                #expect(seen.count >= 2)
                let expected = [2: "apple_unavailable", 3: "apple_unavailable", 4: "apple_timeout"]
                for (attempt, observed) in seen {
                    #expect(expected[attempt] == observed.reason)
                }
                // Each delay stays under its attempt's ceiling, and the ceilings double: 50, 100, 200 ms.
                for (attempt, observed) in seen {
                    #expect(
                        observed.delay
                            <= Int64(
                                policy.ceiling(afterAttempt: attempt - 1).components.seconds * 1000
                                    + policy.ceiling(afterAttempt: attempt - 1).components.attoseconds / 1_000_000_000_000_000))
                }
                #expect(policy.ceiling(afterAttempt: 1) < policy.ceiling(afterAttempt: 2))
                #expect(policy.ceiling(afterAttempt: 2) < policy.ceiling(afterAttempt: 3))
                let final = try await harness.status(jobID)
                #expect(final["attempt"] == "4")
                #expect(try await harness.sim.requestCount("verifyReceipt.production") >= 4)
            }
        }
    }

    /// Apple's "not found, but try again" answers (404 with 4040006, 4040002, 4040004) are retried, not rejected;
    /// a plain 404 (4040010, transaction ID not found) still is.
    @Test func applesRetryableAPIErrorCodesAreRetriedThenVerified() async throws {
        try await VerifierHarness.with { harness in
            let purchase = try await harness.sim.purchase()
            let signed = try #require(purchase["signedTransaction"] as? String)
            try await harness.sim.post("/sim/faults", ["target": "api", "status": 404, "errorCode": 4_040_006, "times": 1])
            try await harness.sim.post("/sim/faults", ["target": "api", "status": 404, "errorCode": 4_040_002, "times": 1])
            var settings = try harness.apiSettings()
            settings["TOLLGATE_CONFIRM_WITH_API"] = "true"
            try await harness.withVerifier(settings) { _ in
                let jobID = try await harness.enqueue(kind: .transaction, payload: signed)
                var reasons: Set<String> = []
                let deadline = ContinuousClock.now + .seconds(20)
                while ContinuousClock.now < deadline {
                    let status = try await harness.status(jobID)
                    if status["state"] == "retrying", let reason = status["reason"] { reasons.insert(reason) }
                    if status["verified.at"] != nil || status["state"] == "rejected" { break }
                    try await Task.sleep(for: .milliseconds(5))
                }
                let events = try await harness.waitForEvents(1)
                #expect(events.first?.jobId == jobID)
                #expect(reasons == ["api_retry_later"])
                #expect(try await harness.status(jobID)["attempt"] == "3")

                try await harness.sim.post("/sim/faults", ["target": "api", "status": 404, "errorCode": 4_040_010, "times": 1])
                let second = try await harness.enqueue(kind: .transaction, payload: signed)
                let rejected = try await harness.waitForStatus(second) { $0["state"] == "rejected" }
                #expect(rejected["reason"] == "api_not_found")
            }
        }
    }

    @Test func permanentFaultEndsDeadThenTollctlListsAndRedrivesIt() async throws {
        try await VerifierHarness.with { harness in
            let receipt = try #require(try await harness.sim.purchase()["receipt"] as? String)
            try await harness.sim.post("/sim/faults", ["target": "verifyReceipt", "status": 503])
            let listener = try await JobResultListener.start(harness)
            defer { listener.stop() }
            try await harness.withVerifier(["TOLLGATE_RETRY_MAX_ATTEMPTS": "3"]) { _ in
                let jobID = try await harness.enqueue(kind: .receipt, payload: receipt)
                let status = try await harness.waitForStatus(jobID) { $0["state"] == "dead" }
                #expect(try await listener.announced(until: jobID) == [jobID])
                #expect(status["reason"] == "retries_exhausted")
                let dead = try await harness.redis.xrange(harness.keys.jobs().deadLetter)
                #expect(dead.count == 1)
                #expect(dead.first?.string("attempts") == "3")
                #expect(dead.first?.string(Job.Field.id) == jobID)
                #expect(try await harness.events().isEmpty)

                // A malformed entry is dead-lettered too, and the verifier keeps going.
                _ = try await harness.redis.xadd(
                    harness.keys.jobs().stream,
                    fields: [
                        (Job.Field.id, Array("bad-job".utf8)), (Job.Field.kind, Array("bogus".utf8)),
                    ])
                let badStatus = try await harness.waitForStatus("bad-job") { $0["state"] == "dead" }
                #expect(badStatus["reason"] == "malformed_entry")

                let environment = ["TOLLGATE_REDIS_URL": harness.redisServer.url]
                let list = try await ChildProcess.run("tollctl", arguments: ["dead", "list", "--count", "10"], environment: environment)
                #expect(list.status == 0)
                #expect(list.output.contains("job=\(jobID)"))
                #expect(list.output.contains("job=bad-job"))
                #expect(list.output.contains("dead-letters=2"))
                #expect(!list.output.contains(receipt.prefix(40)))

                try await harness.sim.clearFaults()
                let deadID = try #require(dead.first?.id)
                let redrive = try await ChildProcess.run("tollctl", arguments: ["dead", "redrive", deadID], environment: environment)
                #expect(redrive.status == 0)
                #expect(redrive.output.contains("redriven=1"))
                let events = try await harness.waitForEvents(1)
                #expect(events.first?.jobId == jobID)
                let after = try await harness.status(jobID)
                #expect(after["verified.at"] != nil)
                #expect(try await harness.redis.xlen(harness.keys.jobs().deadLetter) == 1)
                let missing = try await ChildProcess.run("tollctl", arguments: ["dead", "redrive", deadID], environment: environment)
                #expect(missing.status == 1)

                // --all takes the rest: the malformed entry goes back, and is dead-lettered again.
                let all = try await ChildProcess.run("tollctl", arguments: ["dead", "redrive", "--all"], environment: environment)
                #expect(all.status == 0)
                #expect(all.output.contains("job=bad-job"))
                #expect(all.output.contains("redriven=1"))
                let again = try await harness.redis.xrange(harness.keys.jobs().deadLetter)
                #expect(again.count <= 1)
                try await harness.waitForStatus("bad-job") { $0["state"] == "dead" && $0["updated.at"] != badStatus["updated.at"] }
                #expect(try await harness.redis.xlen(harness.keys.jobs().deadLetter) == 1)
            }
        }
    }

    @Test func verifierKilledMidCallLosesNothingAndAnotherFinishesOnce() async throws {
        try await VerifierHarness.with { harness in
            let receipt = try #require(try await harness.sim.purchase()["receipt"] as? String)
            // Apple holds the first call far longer than the test needs (a loaded machine may take seconds to
            // start the second verifier): the first verifier must still be inside that call when it is killed.
            try await harness.sim.post("/sim/faults", ["target": "verifyReceipt", "delayMs": 60_000, "times": 1])
            // The first verifier never looks for idle entries itself (its own reclaim would also reset the
            // idle time); only its heartbeat keeps the second from taking the job while it is alive.
            let settings = [
                "TOLLGATE_CLAIM_MIN_IDLE_MS": "1500", "TOLLGATE_HEARTBEAT_MS": "300", "TOLLGATE_APPLE_TIMEOUT_MS": "90000",
            ]
            var firstSettings = settings
            firstSettings["TOLLGATE_CLAIM_INTERVAL_MS"] = "600000"
            let first = try ChildProcess.start(
                "verifier", environment: harness.environment(firstSettings),
                log: harness.sim.directory.appendingPathComponent("verifier-a.log"))
            defer { first.kill() }
            let jobID = try await harness.enqueue(kind: .receipt, payload: receipt)
            let deadline = ContinuousClock.now + .seconds(15)
            while try await harness.sim.requestCount("verifyReceipt.production") < 1 {
                guard ContinuousClock.now < deadline else {
                    throw ChildProcess.Failure(description: "the first verifier never called Apple")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            try await harness.withVerifier(settings) { _ in
                // The first verifier is alive and heartbeating: the second does not take its job over.
                try await Task.sleep(for: .seconds(4))
                #expect(try await harness.sim.requestCount("verifyReceipt.production") == 1)
                #expect(try await harness.status(jobID)["state"] == "verifying")

                first.kill()
                let events = try await harness.waitForEvents(1, timeout: .seconds(20))
                #expect(events.first?.jobId == jobID)
                try await Task.sleep(for: .milliseconds(500))
                #expect(try await harness.events().count == 1)
                #expect(try await harness.pendingCount() == 0)
                let calls = try await harness.sim.requestCount("verifyReceipt.production")
                #expect(calls == 2, "verifyReceipt was called \(calls) times")
            }
        }
    }
}
