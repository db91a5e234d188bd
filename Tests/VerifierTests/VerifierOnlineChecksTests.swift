import AppStore
import AppStoreTesting
import Core
import Foundation
import Pipeline
import TestSupport
import Testing

@testable import Verification

/// `TOLLGATE_ONLINE_CHECKS`: the verifier asks the certificates' OCSP responders; when none answers, the job is
/// retried (an OCSP outage delays a purchase, it never rejects one), and with the setting off nothing is asked.
@Suite(.serialized)
struct VerifierOnlineChecksTests {
    /// A purchase's signed transaction, signed again by a new leaf of the simulator's (trusted) CA whose OCSP
    /// responder is a closed loopback port.
    private func transactionWithUnreachableOCSP(_ harness: StoreHarness) async throws -> String {
        let purchase = try await harness.sim.purchase()
        let signed = try #require(purchase["signedTransaction"] as? String)
        let payload = try #require(signed.split(separator: ".").dropFirst().first)
        let json = try #require(Array(payload.utf8).withUnsafeBufferPointer { Base64URL.decode($0) })
        var options = TestCertificateAuthority.Options()
        options.ocspResponderURL = "http://127.0.0.1:1/ocsp"
        let authority = try TestCertificateAuthority(directory: harness.sim.directory.appendingPathComponent("ca"))
            .withNewLeaf(options: options)
        return try authority.signer().sign(json: Data(json))
    }

    @Test func withOnlineChecksAnUnreachableResponderMakesTheJobRetryNotRejected() async throws {
        try await VerifierHarness.with { harness in
            let jws = try await transactionWithUnreachableOCSP(harness)
            try await harness.withVerifier([
                "TOLLGATE_ONLINE_CHECKS": "true", "TOLLGATE_APPLE_TIMEOUT_MS": "1000",
                "TOLLGATE_RETRY_BASE_MS": "60000", "TOLLGATE_RETRY_CAP_MS": "60000",
            ]) { _ in
                let jobID = try await harness.enqueue(kind: .transaction, payload: jws)
                let status = try await harness.waitForStatus(jobID) { $0["state"] == "retrying" }
                #expect(status["reason"] == "retryable_ocsp")
                #expect(try await harness.events().isEmpty)
            }
        }
    }

    @Test func withoutOnlineChecksTheSameTransactionIsVerifiedOffline() async throws {
        try await VerifierHarness.with { harness in
            let jws = try await transactionWithUnreachableOCSP(harness)
            try await harness.withVerifier([:]) { _ in
                let jobID = try await harness.enqueue(kind: .transaction, payload: jws)
                let event = try #require(try await harness.waitForEvents(1).first)
                #expect(event.jobId == jobID)
            }
        }
    }

    @Test func theSettingIsReadAndChecked() throws {
        let base = ["TOLLGATE_BUNDLE_ID": "com.example.app"]
        #expect(try VerifierConfiguration(environment: base).onlineChecks == false)
        let online = try VerifierConfiguration(
            environment: base.merging(["TOLLGATE_ONLINE_CHECKS": "true", "TOLLGATE_ONLINE_CHAIN_LIFETIME": "5m"]) { $1 })
        #expect(online.onlineChecks)
        #expect(online.onlineChainLifetime == .seconds(300))
        #expect(throws: ConfigurationError.self) {
            try VerifierConfiguration(environment: base.merging(["TOLLGATE_ONLINE_CHECKS": "perhaps"]) { $1 })
        }
    }
}
