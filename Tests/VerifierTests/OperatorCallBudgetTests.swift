import AppStore
import Core
import Foundation
import HTTPClient
import Pipeline
import Redis
import TestSupport
import Testing

/// Issue 42 item 3: operators' calls of Apple over HTTP (jobs of kind `operator`) run on the verifier's long-lived
/// API clients and under its fleet-wide buckets, as every other call to Apple. The real `verifier` executable
/// against the real simulator, whose API answers slowly (400 ms) so that each job's call is seen while it runs.
@Suite(.serialized)
struct OperatorCallBudgetTests {
    /// The threads of `pid` named `name` (libcurl's loop threads are `tg-curl`, one per transport).
    static func threads(of pid: Int32, named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.count { task in
            let comm = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)
            return comm?.trimmingCharacters(in: .whitespacesAndNewlines) == name
        }
    }

    /// The sum of a counter's samples in a Prometheus text exposition whose line starts with `prefix`.
    static func sum(_ text: String, _ prefix: String) -> Double {
        text.split(separator: "\n").filter { $0.hasPrefix(prefix) }.compactMap { $0.split(separator: " ").last.flatMap { Double($0) } }
            .reduce(0, +)
    }

    @Test func lookUpJobsTakeTheFleetTokenAndReuseTheVerifiersClients() async throws {
        try await VerifierHarness.with { harness in
            _ = try await harness.sim.post("/sim/faults", ["target": "api", "delayMs": 400])
            let port = try ChildProcess.freePort()
            var settings = try harness.apiSettings()
            settings["TOLLGATE_METRICS_PORT"] = String(port)
            // Class `other` at 10/s in production with a burst of 10 (20 % of Apple's 50/s).
            settings["TOLLGATE_API_RATE_SCALE_PERCENT"] = "20"
            settings["TOLLGATE_VERIFIER_CONCURRENCY"] = "32"
            let verifier = try ChildProcess.start(
                "verifier", environment: harness.environment(settings),
                log: harness.sim.directory.appendingPathComponent("verifier.log"))
            defer { verifier.kill() }
            let metricsURL = try #require(URL(string: "http://127.0.0.1:\(port)/metrics"))
            func metrics() async -> String {
                let response = try? await harness.sim.transport.send(HTTPTransportRequest(method: .get, url: metricsURL))
                return response.map { String(decoding: $0.body, as: UTF8.self) } ?? ""
            }
            #expect(await eventually(timeout: .seconds(20)) { await metrics().contains("tollgate_") })
            let baseline = Self.threads(of: verifier.pid, named: "tg-curl")
            #expect(baseline >= 1)

            let count = 16
            var jobs: [String] = []
            for index in 0..<count {
                let call = OperatorCall(.lookupOrder(orderId: "MBUDGET\(index)"), by: "support")
                jobs.append(
                    try await harness.enqueue(kind: .operatorCall, payload: String(decoding: call.payload, as: UTF8.self), user: nil))
            }
            let started = ContinuousClock.now
            var most = baseline
            var finished = 0
            while finished < count, ContinuousClock.now - started < .seconds(60) {
                most = max(most, Self.threads(of: verifier.pid, named: "tg-curl"))
                finished = 0
                for job in jobs {
                    let state = try await harness.status(job)["state"] ?? ""
                    if JobState(rawValue: state)?.isFinal == true { finished += 1 }
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(finished == count)
            // No API client (and no libcurl thread) per job: the verifier's own ones answered every call.
            #expect(most <= baseline, "tg-curl threads: \(baseline) before, \(most) while the jobs ran")
            let simCounters = JSONValue.read(try await harness.sim.send(.get, "/sim/faults").body)?["requests"]
            let asked = (simCounters?["api.production"]?.int ?? 0) + (simCounters?["api.sandbox"]?.int ?? 0)
            #expect(asked >= count)
            let recorded = Self.sum(await metrics(), #"tollgate_apple_requests_total{endpoint="api""#)
            #expect(Int(recorded) == asked, "the verifier's metrics counted \(recorded) of the \(asked) API calls")
            // Each call took its token of the fleet-wide bucket of Look Up Order ID's class.
            let buckets = try await harness.redis.send("KEYS", "*{rl:other}:*").array ?? []
            #expect(!buckets.isEmpty, "no fleet-wide bucket of class other was taken from")
        }
    }
}
