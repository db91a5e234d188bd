import AppStore
import Foundation
import HTTPClient
import Pipeline
import TestSupport
import Testing

@testable import Verification

/// The real `verifier` executable: configuration errors at startup, `/healthz` and `/metrics`.
@Suite(.serialized)
struct VerifierBinaryTests {
    @Test func missingSettingFailsFastNamingTheVariable() async throws {
        let result = try await ChildProcess.run("verifier", arguments: [], environment: ["TOLLGATE_BUNDLE_ID": ""])
        #expect(result.status == 1)
        #expect(result.output.contains("TOLLGATE_BUNDLE_ID"))
    }

    @Test func metricsShowJobsAppleCallsAndTheChainCache() async throws {
        try await VerifierHarness.with { harness in
            let purchase = try await harness.sim.purchase()
            let receipt = try #require(purchase["receipt"] as? String)
            let signed = try #require(purchase["signedTransaction"] as? String)
            let port = try ChildProcess.freePort()
            let verifier = try ChildProcess.start(
                "verifier", environment: harness.environment(["TOLLGATE_METRICS_PORT": String(port)]),
                log: harness.sim.directory.appendingPathComponent("verifier.log"))
            defer { verifier.kill() }
            try await harness.enqueue(kind: .receipt, payload: receipt)
            try await harness.enqueue(kind: .transaction, payload: signed)
            _ = try await harness.waitForEvents(2)
            try await harness.enqueue(kind: .transaction, payload: signed)  // same chain: a cache hit
            #expect(try await harness.waitForEvents(3).count == 3)

            let base = "http://127.0.0.1:\(port)"
            let health = try await harness.sim.transport.send(
                HTTPTransportRequest(method: .get, url: try #require(URL(string: base + "/healthz"))))
            #expect(health.status == 200)
            let response = try await harness.sim.transport.send(
                HTTPTransportRequest(method: .get, url: try #require(URL(string: base + "/metrics"))))
            let text = String(decoding: response.body, as: UTF8.self)
            #expect(response.status == 200)
            #expect(text.contains(#"tollgate_verifier_jobs_total{kind="receipt",outcome="verified"} 1"#))
            #expect(text.contains(#"tollgate_verifier_jobs_total{kind="transaction",outcome="verified"} 2"#))
            #expect(text.contains(#"tollgate_apple_requests_total{endpoint="verifyReceipt",status="200"} 1"#))
            #expect(text.contains("tollgate_apple_request_duration_seconds"))
            #expect(text.contains("tollgate_chain_cache_hits 1.0"))
            #expect(text.contains("tollgate_chain_cache_hit_ratio 0.5"))

            // SIGTERM stops it gracefully, with nothing left pending.
            #expect(await verifier.terminate(timeout: .seconds(10)))
            #expect(verifier.process.terminationStatus == 0)
            #expect(try await harness.pendingCount() == 0)
        }
    }
}
