import AppStore
import AppStoreTesting
import Core
import Foundation
import HTTPClient
import Pipeline
import Testing

@testable import Verification

/// Startup validation of the verifier's environment.
struct VerifierConfigurationTests {
    @Test func missingOrInvalidSettingsNameTheirVariable() throws {
        #expect(throws: ConfigurationError(variable: "TOLLGATE_BUNDLE_ID", problem: "is required")) {
            _ = try VerifierConfiguration(environment: [:])
        }
        #expect(throws: ConfigurationError(variable: "TOLLGATE_APP_APPLE_ID", problem: "is required in production")) {
            _ = try VerifierConfiguration(environment: ["TOLLGATE_BUNDLE_ID": "b", "TOLLGATE_ENVIRONMENT": "production"])
        }
        do {
            _ = try VerifierConfiguration(environment: ["TOLLGATE_BUNDLE_ID": "b", "TOLLGATE_RETRY_MAX_ATTEMPTS": "x"])
            Issue.record("accepted a bad attempt count")
        } catch {
            #expect(error.message.hasPrefix("TOLLGATE_RETRY_MAX_ATTEMPTS"))
        }
    }

    @Test func defaultsFollowTheIssue() throws {
        let configuration = try VerifierConfiguration(environment: ["TOLLGATE_BUNDLE_ID": "com.example.app"])
        #expect(configuration.environment == .sandbox)
        #expect(configuration.retry.base == .seconds(2))
        #expect(configuration.retry.cap == .seconds(900))
        #expect(configuration.retry.maxAttempts == 10)
        #expect(configuration.concurrency == 64)
        #expect(configuration.appleTimeout < configuration.claimMinIdle)
        #expect(configuration.heartbeatInterval < configuration.claimMinIdle)
        #expect(configuration.rootCertificates == [AppleRootCertificates.appleRootCAG3])
        #expect(configuration.httpTransport == .curl)
        #expect(configuration.apiURL.absoluteString == "https://api.storekit.apple.com")
        #expect(configuration.apiSandboxURL.absoluteString == "https://api.storekit-sandbox.apple.com")
        let older = try VerifierConfiguration(environment: [
            "TOLLGATE_BUNDLE_ID": "com.example.app", "TOLLGATE_APPSTORE_API_URL": "https://api.storekit.itunes.apple.com",
            "TOLLGATE_APPSTORE_API_SANDBOX_URL": "https://api.storekit-sandbox.itunes.apple.com",
        ])
        #expect(older.apiURL.host == "api.storekit.itunes.apple.com")
        #expect(older.apiSandboxURL.host == "api.storekit-sandbox.itunes.apple.com")
    }

    /// Issue 14 item 3: receipts by `verifyReceipt`, the Server API (only with a key) or `auto` (the default); receipt
    /// roots are Apple Inc. Root and the JWS roots unless set.
    @Test func receiptValidationSettingNeedsAKeyForTheServerAPI() throws {
        let base = ["TOLLGATE_BUNDLE_ID": "b"]
        let defaults = try VerifierConfiguration(environment: base)
        #expect(defaults.receiptValidation == .auto)
        #expect(defaults.receiptRoots == [AppleRootCertificates.appleIncRoot, AppleRootCertificates.appleRootCAG3])
        #expect(
            try VerifierConfiguration(environment: base.merging(["TOLLGATE_RECEIPT_VALIDATION": "Verify-Receipt"]) { $1 })
                .receiptValidation == .verifyReceipt)
        for (value, problem) in [("server-api", "needs an App Store Server API key"), ("serverapi", "must be verify-receipt")] {
            do {
                _ = try VerifierConfiguration(environment: base.merging(["TOLLGATE_RECEIPT_VALIDATION": value]) { $1 })
                Issue.record("accepted TOLLGATE_RECEIPT_VALIDATION=\(value)")
            } catch {
                #expect(error.message.hasPrefix("TOLLGATE_RECEIPT_VALIDATION"), "\(error.message)")
                #expect(error.message.contains(problem), "\(error.message)")
            }
        }
    }

    /// Issue 29 item 1: receipts' chains run through Apple's WWDR intermediates unless
    /// `TOLLGATE_RECEIPT_INTERMEDIATE_CERTS` names others (a rotation, or the simulator's CA); an unreadable file stops
    /// the start, naming the variable.
    @Test func receiptIntermediatesAreAppleWWDRUnlessSet() throws {
        let base = ["TOLLGATE_BUNDLE_ID": "b"]
        #expect(try VerifierConfiguration(environment: base).receiptIntermediates == AppleRootCertificates.receiptIntermediates)
        let authority = try TestCertificateAuthority()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("intermediates-\(UUID().uuidString)")
        try authority.write(to: directory)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent(TestCertificateAuthority.FileName.intermediateCertificate).path
        let set = try VerifierConfiguration(environment: base.merging(["TOLLGATE_RECEIPT_INTERMEDIATE_CERTS": path]) { $1 })
        #expect(set.receiptIntermediates == [authority.intermediateDER])
        do {
            _ = try VerifierConfiguration(environment: base.merging(["TOLLGATE_RECEIPT_INTERMEDIATE_CERTS": "/nonexistent.der"]) { $1 })
            Issue.record("accepted an unreadable TOLLGATE_RECEIPT_INTERMEDIATE_CERTS")
        } catch {
            #expect(error.message.hasPrefix("TOLLGATE_RECEIPT_INTERMEDIATE_CERTS"), "\(error.message)")
        }
    }

    /// Issue 16: Apple is called through libcurl unless the operator falls back to URLSession.
    @Test(arguments: [
        ("", HTTPTransportKind?.some(.curl)), (" curl ", .curl), ("URLSession", .urlsession), ("urlsession\n", .urlsession),
        ("nio", nil), ("url session", nil),
    ])
    func transportSettingPicksTheTransport(value: String, expected: HTTPTransportKind?) throws {
        let environment = ["TOLLGATE_BUNDLE_ID": "b", "TOLLGATE_HTTP_TRANSPORT": value]
        guard let expected else {
            #expect(throws: ConfigurationError.self) { _ = try VerifierConfiguration(environment: environment) }
            do {
                _ = try VerifierConfiguration(environment: environment)
            } catch {
                #expect(error.message.hasPrefix("TOLLGATE_HTTP_TRANSPORT"), "\(error.message)")
            }
            return
        }
        let configuration = try VerifierConfiguration(environment: environment)
        #expect(configuration.httpTransport == expected)
        let transport = configuration.httpTransport.make(maximumConnectionsPerHost: 4)
        #expect((transport is CurlTransport) == (expected == .curl))
        #expect((transport is URLSessionTransport) == (expected == .urlsession))
    }

    @Test func productionTakesSandboxOnlyWhenAllowed() throws {
        var configuration = VerifierConfiguration(bundleId: "b", appAppleId: 1, environment: .production)
        #expect(configuration.accepts(.production))
        #expect(!configuration.accepts(.sandbox))
        configuration.acceptSandbox = true
        #expect(configuration.accepts(.sandbox))
        #expect(!configuration.accepts(.xcode))
    }

    /// Issue 13, item 7: in production Apple's answers must come over HTTPS (plain HTTP only to this host), and
    /// shipped placeholders stop startup.
    @Test func productionRefusesPlainHTTPToAppleAndPlaceholders() throws {
        let base = ["TOLLGATE_BUNDLE_ID": "b", "TOLLGATE_ENVIRONMENT": "production", "TOLLGATE_APP_APPLE_ID": "1"]
        for variable in [
            "TOLLGATE_VERIFY_RECEIPT_URL", "TOLLGATE_VERIFY_RECEIPT_SANDBOX_URL", "TOLLGATE_APPSTORE_API_URL",
            "TOLLGATE_APPSTORE_API_SANDBOX_URL",
        ] {
            do {
                _ = try VerifierConfiguration(
                    environment: base.merging([variable: "http://apple.example.com/verifyReceipt"]) { _, new in new })
                Issue.record("\(variable) over plain http was accepted in production")
            } catch {
                #expect(error.message.hasPrefix(variable), "\(error.message)")
            }
            for allowed in ["https://apple.example.com/x", "http://127.0.0.1:9700/x", "http://localhost:9700/x"] {
                _ = try VerifierConfiguration(environment: base.merging([variable: allowed]) { _, new in new })
            }
            // A sandbox deployment (a test bench against the simulator on another host) may use plain HTTP.
            _ = try VerifierConfiguration(environment: ["TOLLGATE_BUNDLE_ID": "b", variable: "http://appstore-sim:9700/x"])
        }
        do {
            _ = try VerifierConfiguration(environment: base.merging(["TOLLGATE_SHARED_SECRET": "replace-me"]) { _, new in new })
            Issue.record("a placeholder shared secret was accepted")
        } catch {
            #expect(error.message.hasPrefix("TOLLGATE_SHARED_SECRET"))
        }
    }
}
