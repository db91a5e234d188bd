import Core
import Foundation
import Testing
import Webhooks

@testable import notifier

@Suite struct WebhookSettingsTests {
    @Test func oneEndpointFromURLAndSecrets() throws {
        let configuration = try NotifierConfiguration(environment: [
            "TOLLGATE_WEBHOOK_URL": "https://hooks.example.com/tollgate",
            "TOLLGATE_WEBHOOK_SECRETS": "whsec_new_0123456789abcdefghijklmnop, whsec_old_0123456789abcdefghijklmnop",
            "TOLLGATE_WEBHOOK_HORIZON": "2h",
        ])
        #expect(
            configuration.webhooks.endpoints == [
                WebhookEndpoint(
                    name: "default", url: URL(string: "https://hooks.example.com/tollgate")!,
                    secrets: ["whsec_new_0123456789abcdefghijklmnop", "whsec_old_0123456789abcdefghijklmnop"])
            ])
        #expect(configuration.delivery.horizon == .seconds(7200))
        // The poll: 25 ms after work, doubling to 200 ms while idle, unless set (the first never above the last).
        #expect(configuration.delivery.pollMinimum == .milliseconds(25) && configuration.delivery.pollInterval == .milliseconds(200))
        let tuned = try NotifierConfiguration(environment: [
            "TOLLGATE_WEBHOOK_URL": "https://hooks.example.com/t", "TOLLGATE_WEBHOOK_SECRETS": longSecret,
            "TOLLGATE_WEBHOOK_POLL_MS": "20", "TOLLGATE_WEBHOOK_POLL_MIN_MS": "50",
        ])
        #expect(tuned.delivery.pollInterval == .milliseconds(20) && tuned.delivery.pollMinimum == .milliseconds(20))
        #expect(throws: ConfigurationError.self) {
            try NotifierConfiguration(environment: [
                "TOLLGATE_WEBHOOK_URL": "https://hooks.example.com/t", "TOLLGATE_WEBHOOK_SECRETS": longSecret,
                "TOLLGATE_WEBHOOK_POLL_MS": "0",
            ])
        }
    }

    /// An endpoint names the one project whose events it gets (docs/PROJECTS.md): `default` when absent, a malformed
    /// id refused naming the variable, in the file and for the one-endpoint variables.
    @Test func anEndpointNamesItsProject() throws {
        let one = ["TOLLGATE_WEBHOOK_URL": "https://hooks.example.com/t", "TOLLGATE_WEBHOOK_SECRETS": longSecret]
        #expect(try NotifierConfiguration(environment: one).webhooks.endpoints.first?.project == .default)
        let games = try NotifierConfiguration(environment: one.merging(["TOLLGATE_WEBHOOK_PROJECT": "games"]) { $1 })
        #expect(games.webhooks.endpoints.first?.project == ProjectID("games"))
        do {
            _ = try NotifierConfiguration(environment: one.merging(["TOLLGATE_WEBHOOK_PROJECT": "Games!"]) { $1 })
            Issue.record("a malformed project id was accepted")
        } catch {
            #expect(error.variable == "TOLLGATE_WEBHOOK_PROJECT")
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("webhooks-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        let json =
            #"[{"name":"shop","url":"https://a.example.com/h","secrets":["\#(longSecret)"]},"#
            + #"{"name":"arcade","url":"https://b.example.com/h","secrets":["\#(longSecret)"],"project":"games"}]"#
        try Data(json.utf8).write(to: file)
        let endpoints = try NotifierConfiguration(environment: ["TOLLGATE_WEBHOOKS": file.path]).webhooks.endpoints
        #expect(endpoints.map(\.project) == [.default, ProjectID("games")])
        try Data(#"[{"name":"arcade","url":"https://b.example.com/h","secrets":["\#(longSecret)"],"project":"no/such"}]"#.utf8).write(
            to: file)
        #expect(throws: ConfigurationError.self) { try NotifierConfiguration(environment: ["TOLLGATE_WEBHOOKS": file.path]) }
    }

    @Test func plainHTTPOnlyToLoopbackUnlessAllowed() throws {
        let remote = ["TOLLGATE_WEBHOOK_URL": "http://hooks.example.com/x", "TOLLGATE_WEBHOOK_SECRETS": longSecret]
        #expect(throws: ConfigurationError.self) { try NotifierConfiguration(environment: remote) }
        #expect(throws: Never.self) {
            try NotifierConfiguration(environment: remote.merging(["TOLLGATE_WEBHOOK_ALLOW_HTTP": "true"]) { $1 })
        }
        #expect(throws: Never.self) {
            try NotifierConfiguration(environment: [
                "TOLLGATE_WEBHOOK_URL": "http://127.0.0.1:9800/", "TOLLGATE_WEBHOOK_SECRETS": longSecret,
            ])
        }
        #expect(throws: ConfigurationError.self) {
            try NotifierConfiguration(environment: ["TOLLGATE_WEBHOOK_URL": "ftp://example.com/", "TOLLGATE_WEBHOOK_SECRETS": longSecret])
        }
    }

    @Test func missingEndpointsOrSecretsFailNamingTheVariable() {
        #expect(throws: ConfigurationError(variable: "TOLLGATE_WEBHOOK_URL", problem: "or TOLLGATE_WEBHOOKS is required")) {
            try NotifierConfiguration(environment: [:])
        }
        #expect(
            throws: ConfigurationError(variable: "TOLLGATE_WEBHOOK_SECRETS", problem: "is required with TOLLGATE_WEBHOOK_URL")
        ) {
            try NotifierConfiguration(environment: ["TOLLGATE_WEBHOOK_URL": "https://example.com/"])
        }
    }

    @Test func severalEndpointsFromAFileWithTypeFilters() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("webhooks-\(UUID().uuidString).json")
        try Data(
            #"""
            [{"name": "crm", "url": "https://crm.example.com/h", "secrets": ["whsec_new_0123456789abcdefghijklmnop", "whsec_old_0123456789abcdefghijklmnop"], "types": ["coins"]},
             {"name": "bi", "url": "https://bi.example.com/h", "secrets": "whsec_old_0123456789abcdefghijklmnop,whsec_new_0123456789abcdefghijklmnop"}]
            """#.utf8
        ).write(to: file)
        let settings = try WebhookSettings(reader: EnvironmentReader(["TOLLGATE_WEBHOOKS": file.path]))
        #expect(settings.endpoints.map(\.name) == ["crm", "bi"])
        #expect(settings.endpoints[0].types == ["coins"])
        #expect(settings.endpoints[1].secrets == ["whsec_old_0123456789abcdefghijklmnop", "whsec_new_0123456789abcdefghijklmnop"])
        #expect(settings.endpoints[0].wants("coins") && !settings.endpoints[0].wants("entitlement"))
        #expect(settings.endpoints[1].wants("anything"))
    }

    /// Issue 42 item 4: webhook secrets are held to the service keys' rule (`SecretRule`: at least 32 bytes, not the
    /// shipped placeholder), in the one-endpoint variables and in the file, and the refusal never shows the secret.
    @Test func aShortOrPlaceholderSecretIsRefusedWithoutShowingIt() throws {
        let short = "whsec_short_31_bytes_0123456789"
        #expect(short.utf8.count == 31)
        for secrets in [short, "\(longSecret),\(short)", "whsec_replace-me_0123456789abcdefghijkl"] {
            do {
                _ = try NotifierConfiguration(environment: [
                    "TOLLGATE_WEBHOOK_URL": "https://h.example.com/", "TOLLGATE_WEBHOOK_SECRETS": secrets,
                ])
                Issue.record("the secrets \(secrets.count) characters long were accepted")
            } catch {
                #expect(error.variable == "TOLLGATE_WEBHOOK_SECRETS")
                #expect(!error.problem.contains(short) && !error.problem.contains("whsec_"), "\(error.problem)")
            }
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("webhooks-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"[{"name":"crm","url":"https://a.example.com/h","secrets":["\#(longSecret)","\#(short)"]}]"#.utf8).write(to: file)
        do {
            _ = try NotifierConfiguration(environment: ["TOLLGATE_WEBHOOKS": file.path])
            Issue.record("a short secret in the endpoints file was accepted")
        } catch {
            #expect(error.variable == "TOLLGATE_WEBHOOKS")
            #expect(error.problem.contains("crm") && error.problem.contains("32") && !error.problem.contains(short), "\(error.problem)")
        }
        // Exactly 32 bytes is enough.
        let exact = String(repeating: "k", count: 32)
        #expect(throws: Never.self) {
            try NotifierConfiguration(environment: ["TOLLGATE_WEBHOOK_URL": "https://h.example.com/", "TOLLGATE_WEBHOOK_SECRETS": exact])
        }
    }
}

/// A webhook secret that meets the rule (at least 32 bytes).
let longSecret = "whsec_test_0123456789abcdefghijklmnop"
