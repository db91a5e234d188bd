import Foundation
import Hummingbird
import TestSupport
import Testing

@testable import ingest

/// `tollctl dev token`, the real binary: the token it prints passes ingest's own ``Authenticator`` built from ingest's
/// configuration reader on the same environment (secret, issuer, audience, longest lifetime); it is refused outside
/// sandbox and beyond the longest lifetime.
@Suite struct DevTokenCommandTests {
    static let settings = [
        "TOLLGATE_ENVIRONMENT": "sandbox",
        "TOLLGATE_CLIENT_JWT_SECRET": "dev-token-test-secret-0123456789abcdef",
        "TOLLGATE_CLIENT_JWT_ISSUER": "https://auth.example.com",
        "TOLLGATE_CLIENT_JWT_AUDIENCE": "tollgate-test",
        "TOLLGATE_CLIENT_JWT_MAX_LIFETIME": "2h",
    ]

    /// The caller ingest sees for `Authorization: Bearer token`, with its authenticator built as `App.build`
    /// builds it from `environment`.
    static func principal(_ token: String, environment: [String: String]) async throws -> Principal {
        let configuration = try IngestConfiguration(
            environment: environment.merging(["TOLLGATE_BUNDLE_ID": "com.example.app"]) { old, _ in old })
        let authenticator = await Authenticator(
            clientJWTSecret: configuration.clientJWTSecret, serviceKeys: configuration.serviceKeys,
            rules: .init(
                issuer: configuration.clientJWTIssuer, audience: configuration.clientJWTAudience,
                maxLifetime: configuration.clientJWTMaxLifetime))
        let request = Request(
            head: HTTPRequest(
                method: .get, scheme: "http", authority: "localhost", path: "/", headerFields: [.authorization: "Bearer \(token)"]),
            body: RequestBody(buffer: ByteBuffer()))
        return try await authenticator.authenticate(request)
    }

    @Test func theMintedTokenIsAcceptedByIngestsRules() async throws {
        let run = try await ChildProcess.run("tollctl", arguments: ["dev", "token", "alice-1", "--ttl", "600"], environment: Self.settings)
        #expect(run.status == 0, "\(run.output)")
        let token = run.output.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.split(separator: ".").count == 3)
        #expect(try await Self.principal(token, environment: Self.settings) == .user("alice-1"))

        // The same token for a deployment with another audience, issuer or secret is refused: the claims are real.
        for (name, value) in [
            ("TOLLGATE_CLIENT_JWT_AUDIENCE", "another-app"), ("TOLLGATE_CLIENT_JWT_ISSUER", "https://other.example.com"),
            ("TOLLGATE_CLIENT_JWT_SECRET", "another-secret-0123456789abcdefghijklmn"),
            ("TOLLGATE_CLIENT_JWT_MAX_LIFETIME", "5m"),
        ] {
            let other = Self.settings.merging([name: value]) { _, new in new }
            await #expect(throws: IngestError.self, "\(name)=\(value)") {
                _ = try await Self.principal(token, environment: other)
            }
        }
    }

    @Test(arguments: ["production", "Production", ""])
    func refusedOutsideSandbox(environment: String) async throws {
        let settings = Self.settings.merging(["TOLLGATE_ENVIRONMENT": environment]) { _, new in new }
        let run = try await ChildProcess.run("tollctl", arguments: ["dev", "token", "alice-1"], environment: settings)
        #expect(run.status == 1)
        #expect(run.output.contains("tollctl: error: not_sandbox: "), "\(run.output)")
        #expect(!run.output.contains("eyJ"))
    }

    @Test func aTokenLongerThanIngestAllowsIsRefused() async throws {
        let run = try await ChildProcess.run(
            "tollctl", arguments: ["dev", "token", "alice-1", "--ttl", "7201"], environment: Self.settings)
        #expect(run.status == 1)
        #expect(run.output.contains("tollctl: error: invalid_ttl: "), "\(run.output)")
        let shortSecret = Self.settings.merging(["TOLLGATE_CLIENT_JWT_SECRET": "short"]) { _, new in new }
        let weak = try await ChildProcess.run("tollctl", arguments: ["dev", "token", "alice-1"], environment: shortSecret)
        #expect(weak.status == 1)
        #expect(weak.output.contains("TOLLGATE_CLIENT_JWT_SECRET"), "\(weak.output)")
    }
}
