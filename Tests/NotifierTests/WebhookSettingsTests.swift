import Core
import Foundation
import Testing
import Webhooks

@testable import notifier

@Suite struct WebhookSettingsTests {
    @Test func oneEndpointFromURLAndSecrets() throws {
        let configuration = try NotifierConfiguration(environment: [
            "TOLLGATE_WEBHOOK_URL": "https://hooks.example.com/tollgate",
            "TOLLGATE_WEBHOOK_SECRETS": "whsec_new, whsec_old",
            "TOLLGATE_WEBHOOK_HORIZON": "2h",
        ])
        #expect(
            configuration.webhooks.endpoints == [
                WebhookEndpoint(
                    name: "default", url: URL(string: "https://hooks.example.com/tollgate")!, secrets: ["whsec_new", "whsec_old"])
            ])
        #expect(configuration.delivery.horizon == .seconds(7200))
        // The poll: 25 ms after work, doubling to 200 ms while idle, unless set (the first never above the last).
        #expect(configuration.delivery.pollMinimum == .milliseconds(25) && configuration.delivery.pollInterval == .milliseconds(200))
        let tuned = try NotifierConfiguration(environment: [
            "TOLLGATE_WEBHOOK_URL": "https://hooks.example.com/t", "TOLLGATE_WEBHOOK_SECRETS": "s",
            "TOLLGATE_WEBHOOK_POLL_MS": "20", "TOLLGATE_WEBHOOK_POLL_MIN_MS": "50",
        ])
        #expect(tuned.delivery.pollInterval == .milliseconds(20) && tuned.delivery.pollMinimum == .milliseconds(20))
        #expect(throws: ConfigurationError.self) {
            try NotifierConfiguration(environment: [
                "TOLLGATE_WEBHOOK_URL": "https://hooks.example.com/t", "TOLLGATE_WEBHOOK_SECRETS": "s", "TOLLGATE_WEBHOOK_POLL_MS": "0",
            ])
        }
    }

    /// An endpoint names the one project whose events it gets (docs/PROJECTS.md): `default` when absent, a malformed
    /// id refused naming the variable, in the file and for the one-endpoint variables.
    @Test func anEndpointNamesItsProject() throws {
        let one = ["TOLLGATE_WEBHOOK_URL": "https://hooks.example.com/t", "TOLLGATE_WEBHOOK_SECRETS": "s"]
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
            #"[{"name":"shop","url":"https://a.example.com/h","secrets":["s"]},"#
            + #"{"name":"arcade","url":"https://b.example.com/h","secrets":["t"],"project":"games"}]"#
        try Data(json.utf8).write(to: file)
        let endpoints = try NotifierConfiguration(environment: ["TOLLGATE_WEBHOOKS": file.path]).webhooks.endpoints
        #expect(endpoints.map(\.project) == [.default, ProjectID("games")])
        try Data(#"[{"name":"arcade","url":"https://b.example.com/h","secrets":["t"],"project":"no/such"}]"#.utf8).write(to: file)
        #expect(throws: ConfigurationError.self) { try NotifierConfiguration(environment: ["TOLLGATE_WEBHOOKS": file.path]) }
    }

    @Test func plainHTTPOnlyToLoopbackUnlessAllowed() throws {
        let remote = ["TOLLGATE_WEBHOOK_URL": "http://hooks.example.com/x", "TOLLGATE_WEBHOOK_SECRETS": "s"]
        #expect(throws: ConfigurationError.self) { try NotifierConfiguration(environment: remote) }
        #expect(throws: Never.self) {
            try NotifierConfiguration(environment: remote.merging(["TOLLGATE_WEBHOOK_ALLOW_HTTP": "true"]) { $1 })
        }
        #expect(throws: Never.self) {
            try NotifierConfiguration(environment: ["TOLLGATE_WEBHOOK_URL": "http://127.0.0.1:9800/", "TOLLGATE_WEBHOOK_SECRETS": "s"])
        }
        #expect(throws: ConfigurationError.self) {
            try NotifierConfiguration(environment: ["TOLLGATE_WEBHOOK_URL": "ftp://example.com/", "TOLLGATE_WEBHOOK_SECRETS": "s"])
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
            [{"name": "crm", "url": "https://crm.example.com/h", "secrets": ["a", "b"], "types": ["coins"]},
             {"name": "bi", "url": "https://bi.example.com/h", "secrets": "c,d"}]
            """#.utf8
        ).write(to: file)
        let settings = try WebhookSettings(reader: EnvironmentReader(["TOLLGATE_WEBHOOKS": file.path]))
        #expect(settings.endpoints.map(\.name) == ["crm", "bi"])
        #expect(settings.endpoints[0].types == ["coins"])
        #expect(settings.endpoints[1].secrets == ["c", "d"])
        #expect(settings.endpoints[0].wants("coins") && !settings.endpoints[0].wants("entitlement"))
        #expect(settings.endpoints[1].wants("anything"))
    }
}
