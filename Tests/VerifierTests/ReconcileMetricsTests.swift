import AppStore
import Core
import Foundation
import HTTPClient
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification

/// The real `verifier` executable's reconciler metrics and settings.
@Suite(.serialized)
struct ReconcileMetricsTests {
    @Test func metricsCountRecoveredNotificationsAndTheLastSuccessfulPass() async throws {
        try await VerifierHarness.with { harness in
            let purchase = try await harness.sim.purchase()
            let uuid = try #require(purchase["notificationUUID"] as? String)
            let port = try ChildProcess.freePort()
            var settings = try ReconcileTestSupport.settings(harness, interval: "200ms")
            settings["TOLLGATE_METRICS_PORT"] = String(port)
            let verifier = try ChildProcess.start(
                "verifier", environment: harness.environment(settings),
                log: harness.sim.directory.appendingPathComponent("verifier.log"))
            defer { verifier.kill() }
            let seen = try await eventually {
                let marked =
                    try await harness.redis.send("EXISTS", harness.keys.reconcileSeen(notificationUUID: uuid, partition: 0)).int == 1
                let passed = try await ReconcileTestSupport.lastPass(harness) != nil
                return marked && passed
            }
            #expect(seen)
            let url = try #require(URL(string: "http://127.0.0.1:\(port)/metrics"))
            var text = ""
            _ = await eventually(timeout: .seconds(10)) {
                let response = try? await harness.sim.transport.send(HTTPTransportRequest(method: .get, url: url))
                text = response.map { String(decoding: $0.body, as: UTF8.self) } ?? ""
                return text.contains("tollgate_reconcile_last_success_timestamp_seconds")
            }
            #expect(text.contains(#"tollgate_reconcile_notifications_recovered_total{environment="Production"} 1"#))
            #expect(text.contains(#"tollgate_reconcile_passes_total{outcome="success"}"#))
            #expect(text.contains("tollgate_reconcile_last_success_timestamp_seconds"))
            // SIGTERM stops the reconciler with the rest, gracefully, and releases nothing it does not hold.
            #expect(await verifier.terminate(timeout: .seconds(10)))
            #expect(verifier.process.terminationStatus == 0)
        }
    }

    @Test func settingsParseDurationsAndRefuseNonsense() throws {
        var environment = [
            "TOLLGATE_BUNDLE_ID": "com.example.app", "TOLLGATE_RECONCILE_INTERVAL": "90s",
            "TOLLGATE_RECONCILE_ONLY_FAILURES": "true", "TOLLGATE_SWEEP_GRACE": "2h",
            "TOLLGATE_RECONCILE_LOOKBACK": "7d",
        ]
        let configuration = try VerifierConfiguration(environment: environment)
        #expect(configuration.reconcile.interval == .seconds(90))
        #expect(configuration.reconcile.onlyFailures)
        #expect(configuration.reconcile.sweepGrace == .seconds(7200))
        #expect(configuration.reconcile.lookback == .seconds(7 * 86_400))
        #expect(EnvironmentReader.parseDuration("250ms") == .milliseconds(250))
        #expect(EnvironmentReader.parseDuration("45") == .seconds(45))
        environment["TOLLGATE_RECONCILE_LOOKBACK"] = "200d"
        #expect(throws: ConfigurationError.self) { try VerifierConfiguration(environment: environment) }
        environment["TOLLGATE_RECONCILE_LOOKBACK"] = nil
        environment["TOLLGATE_RECONCILE_INTERVAL"] = "soon"
        #expect(throws: ConfigurationError.self) { try VerifierConfiguration(environment: environment) }
    }
}
