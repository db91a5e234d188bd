import AppStore
import Pipeline
import Testing
@testable import verifier

/// Startup validation of the verifier's environment.
struct VerifierConfigurationTests {
    @Test func missingOrInvalidSettingsNameTheirVariable() throws {
        #expect(throws: PipelineError.invalidConfiguration(variable: "TOLLGATE_BUNDLE_ID", message: "is required")) {
            _ = try VerifierConfiguration(environment: [:])
        }
        #expect(throws: PipelineError.invalidConfiguration(variable: "TOLLGATE_APP_APPLE_ID", message: "is required in production")) {
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
    }

    @Test func productionTakesSandboxOnlyWhenAllowed() throws {
        var configuration = VerifierConfiguration(bundleId: "b", appAppleId: 1, environment: .production)
        #expect(configuration.accepts(.production))
        #expect(!configuration.accepts(.sandbox))
        configuration.acceptSandbox = true
        #expect(configuration.accepts(.sandbox))
        #expect(!configuration.accepts(.xcode))
    }
}
