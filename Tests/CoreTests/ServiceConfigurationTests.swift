import Core
import Foundation
import Logging
import Pipeline
import ServiceKit
import TestSupport
import Testing
import Webhooks

@testable import Verification
@testable import appstore_sim
@testable import fulfiller
@testable import ingest
@testable import notifier

/// One table of edge cases, run against every service's configuration: whatever service reads a setting, an
/// empty or blank value is the default, values are trimmed, booleans take on/off/yes/no/1/0, `LOG_LEVEL=warn`
/// is `warning`, and a bad value stops startup with a ``ConfigurationError`` naming that variable.
@Suite struct ServiceConfigurationTests {
    /// What a row reads back from a service's configuration.
    struct Readback: Equatable {
        var number: Int?
        var flag: Bool?
        var level: Logger.Level?
        var duration: Duration?
    }

    /// A service's reader: the environment it needs to start at all, which variable stands for each kind of
    /// value, and how to read those values back.
    struct Service: Sendable, CustomTestStringConvertible {
        var name: String
        var base: [String: String]
        var number: String
        var flag: String?
        var duration: String?
        var read: @Sendable ([String: String]) throws -> Readback
        var testDescription: String { name }
    }

    enum Kind: CaseIterable { case number, flag, level, duration }

    /// A row: a value, and what it must read as (`nil`: refused, naming the variable).
    struct Row {
        var kind: Kind
        var value: String
        var expected: Readback?
    }

    static let catalog: String = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tollgate-config-catalog-\(getpid()).json")
        try? Data(#"{"products":[{"productId":"coins.100","type":"consumable","coins":100}]}"#.utf8).write(to: url)
        return url.path
    }()

    static let services: [Service] = [
        Service(
            name: "ingest", base: ["TOLLGATE_SHARED_SECRET": "s3cret", "TOLLGATE_BUNDLE_ID": "com.example.app"],
            number: "TOLLGATE_HTTP_PORT",
            flag: "TOLLGATE_V1_NOTIFICATIONS", duration: "TOLLGATE_ORDER_TTL"
        ) { environment in
            let configuration = try IngestConfiguration(environment: environment)
            return Readback(
                number: configuration.port, flag: configuration.v1SharedSecret != nil,
                level: configuration.shared.logLevel, duration: configuration.orderLifetime)
        },
        Service(
            name: "verifier", base: ["TOLLGATE_BUNDLE_ID": "com.example.app"], number: "TOLLGATE_VERIFIER_CONCURRENCY",
            flag: "TOLLGATE_ACCEPT_SANDBOX", duration: "TOLLGATE_RECONCILE_INTERVAL"
        ) { environment in
            let configuration = try VerifierConfiguration(environment: environment)
            return Readback(
                number: configuration.concurrency, flag: configuration.acceptSandbox,
                level: configuration.shared.logLevel, duration: configuration.reconcile.interval)
        },
        Service(
            name: "fulfiller", base: ["TOLLGATE_CATALOG": catalog], number: "TOLLGATE_FULFILLER_CONCURRENCY",
            flag: "TOLLGATE_CLAMP_REFUNDS", duration: "TOLLGATE_SHUTDOWN_GRACE"
        ) { environment in
            let configuration = try FulfillerConfiguration(environment: environment)
            return Readback(
                number: configuration.concurrency, flag: configuration.clampRefunds,
                level: configuration.shared.logLevel, duration: configuration.shared.shutdownGrace)
        },
        Service(
            name: "notifier",
            base: [
                "TOLLGATE_WEBHOOK_URL": "https://hooks.example.com/h", "TOLLGATE_WEBHOOK_SECRETS": "whsec_config_test_0123456789abcdefghij",
            ],
            number: "TOLLGATE_WEBHOOK_CONCURRENCY", flag: "TOLLGATE_WEBHOOK_ALLOW_HTTP", duration: "TOLLGATE_SHUTDOWN_GRACE"
        ) { environment in
            let configuration = try NotifierConfiguration(environment: environment)
            return Readback(
                number: configuration.delivery.concurrency, flag: configuration.webhooks.allowHTTP,
                level: configuration.shared.logLevel, duration: configuration.shared.shutdownGrace)
        },
        Service(name: "appstore-sim", base: [:], number: "SIM_PORT", flag: nil, duration: "SIM_SHUTDOWN_GRACE") { environment in
            let configuration = try SimConfiguration(environment: environment)
            return Readback(
                number: configuration.port, level: configuration.logLevel,
                duration: configuration.shutdownGrace)
        },
    ]

    /// The edge cases; `default` rows read back the service's value with nothing set.
    static func rows(defaults: Readback) -> [Row] {
        func with(_ change: (inout Readback) -> Void) -> Readback {
            var readback = defaults
            change(&readback)
            return readback
        }
        return [
            Row(kind: .number, value: "", expected: defaults),
            Row(kind: .number, value: "  \t", expected: defaults),
            Row(kind: .number, value: " 42 ", expected: with { $0.number = 42 }),
            Row(kind: .number, value: "42\n", expected: with { $0.number = 42 }),
            Row(kind: .number, value: "forty", expected: nil),
            Row(kind: .number, value: "4.5", expected: nil),
            Row(kind: .number, value: "-1", expected: nil),
            Row(kind: .number, value: "99999999999", expected: nil),
            Row(kind: .flag, value: "", expected: defaults),
            Row(kind: .flag, value: "on", expected: with { $0.flag = true }),
            Row(kind: .flag, value: "OFF", expected: with { $0.flag = false }),
            Row(kind: .flag, value: "yes", expected: with { $0.flag = true }),
            Row(kind: .flag, value: "No", expected: with { $0.flag = false }),
            Row(kind: .flag, value: "1", expected: with { $0.flag = true }),
            Row(kind: .flag, value: "0", expected: with { $0.flag = false }),
            Row(kind: .flag, value: " TRUE ", expected: with { $0.flag = true }),
            Row(kind: .flag, value: "maybe", expected: nil),
            Row(kind: .level, value: "", expected: defaults),
            Row(kind: .level, value: "warn", expected: with { $0.level = .warning }),
            Row(kind: .level, value: " WARNING ", expected: with { $0.level = .warning }),
            Row(kind: .level, value: "debug", expected: with { $0.level = .debug }),
            Row(kind: .level, value: "loud", expected: nil),
            Row(kind: .duration, value: "", expected: defaults),
            Row(kind: .duration, value: " 90s ", expected: with { $0.duration = .seconds(90) }),
            Row(kind: .duration, value: "2m", expected: with { $0.duration = .seconds(120) }),
            Row(kind: .duration, value: "45", expected: with { $0.duration = .seconds(45) }),
            Row(kind: .duration, value: "soon", expected: nil),
        ]
    }

    @Test(arguments: services)
    func oneRuleForEveryService(service: Service) throws {
        let defaults = try service.read(service.base)
        #expect(defaults.level == .info)
        var checked = 0
        for row in Self.rows(defaults: defaults) {
            let variable: String?
            switch row.kind {
            case .number: variable = service.number
            case .flag: variable = service.flag
            case .level: variable = "LOG_LEVEL"
            case .duration: variable = service.duration
            }
            guard let variable else { continue }
            let environment = service.base.merging([variable: row.value]) { _, new in new }
            let shown = "\(service.name): \(variable)=\(row.value.debugDescription)"
            if let expected = row.expected {
                #expect(try service.read(environment) == expected, "\(shown)")
            } else {
                do {
                    _ = try service.read(environment)
                    Issue.record("\(shown) was accepted")
                } catch {
                    #expect((error as? ConfigurationError)?.variable == variable, "\(shown): \(error)")
                }
            }
            checked += 1
        }
        #expect(checked >= 12)
    }
    /// Every service's graceful shutdown ends before the orchestrator kills it (compose's `stop_grace_period`,
    /// read from `compose/docker-compose.yml`), with at least 5 s to spare; ingest's lets the longest `?wait`
    /// answer.
    @Test func shutdownGraceDefaultsEndBeforeComposeKills() throws {
        let kills = try Self.composeStopGracePeriods()
        let ingest = try IngestConfiguration(environment: ["TOLLGATE_BUNDLE_ID": "com.example.app"])
        let defaults: [String: Duration] = [
            "ingest": ingest.shared.shutdownGrace,
            "verifier": try VerifierConfiguration(environment: ["TOLLGATE_BUNDLE_ID": "com.example.app"]).shared.shutdownGrace,
            "fulfiller": try FulfillerConfiguration(environment: ["TOLLGATE_CATALOG": Self.catalog]).shared.shutdownGrace,
            "notifier": try NotifierConfiguration(
                environment: [
                    "TOLLGATE_WEBHOOK_URL": "https://hooks.example.com/h",
                    "TOLLGATE_WEBHOOK_SECRETS": "whsec_config_test_0123456789abcdefghij",
                ]
            ).shared.shutdownGrace,
            "appstore-sim": try SimConfiguration(environment: [:]).shutdownGrace,
        ]
        for (service, grace) in defaults.sorted(by: { $0.key < $1.key }) {
            let kill = try #require(kills[service], "compose gives \(service) no stop_grace_period")
            #expect(grace + .seconds(5) <= kill, "\(service): grace \(grace), compose kills after \(kill)")
        }
        #expect(ingest.shared.shutdownGrace >= .seconds(ingest.maxWaitSeconds + 5))
        let app = ["TOLLGATE_BUNDLE_ID": "com.example.app"]
        #expect(
            try IngestConfiguration(environment: app.merging(["TOLLGATE_SHUTDOWN_GRACE": "5s"]) { $1 }).shared.shutdownGrace == .seconds(5))
        do {
            _ = try IngestConfiguration(environment: app.merging(["TOLLGATE_SHUTDOWN_GRACE": "0s"]) { $1 })
            Issue.record("a zero shutdown grace was accepted")
        } catch {
            #expect(error.variable == "TOLLGATE_SHUTDOWN_GRACE")
        }
    }

    /// Issue 29 item 6: a deployment against Apple carries nothing of the simulator (its service and its CA, private
    /// keys included, come only with `sim.yml`), the simulator's unauthenticated control API is published on
    /// loopback by default, and ingest's operators' endpoints are on a port of their own that is published nowhere,
    /// where the health check and Prometheus find them.
    @Test func composeKeepsTheSimulatorAndTheOperatorsEndpointsOffThePublicSide() throws {
        func file(_ name: String) throws -> String {
            try String(contentsOf: Vectors.repositoryRoot.appendingPathComponent("compose/\(name)"), encoding: .utf8)
        }
        let main = try file("docker-compose.yml")
        let withoutComments = main.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("#") }
        #expect(
            !withoutComments.contains { $0.contains("sim-ca") || $0.contains("appstore-sim") }, "the Apple deployment names the simulator")
        let sim = try file("sim.yml")
        #expect(sim.contains(#""${SIM_PUBLISH_PORT:-127.0.0.1:9700}:9700""#))
        #expect(sim.components(separatedBy: "sim-ca:/sim-ca:ro").count - 1 == 2, "the CA is mounted read-only into ingest and the verifier")
        let ingestEnvironment = try file("ingest.env")
        #expect(ingestEnvironment.contains("\nTOLLGATE_OPS_PORT=9089\n"))
        #expect(!ingestEnvironment.contains("\nTOLLGATE_OPS_ON_PUBLIC_LISTENER=true"))
        #expect(main.contains(#"["CMD", "curl", "-fsS", "http://127.0.0.1:9089/readyz"]"#))
        #expect(!main.contains("8080/readyz") && !main.contains("9089:"), "the operators' port is published or the public one checked")
        let prometheus = try file("prometheus/prometheus.yml")
        #expect(prometheus.contains("names: [ingest]\n        type: A\n        port: 9089"))
    }

    /// Each compose service's `stop_grace_period` (whole seconds), from the compose file and the simulator's.
    static func composeStopGracePeriods() throws -> [String: Duration] {
        let compose = try ["docker-compose.yml", "sim.yml"].map {
            try String(contentsOf: Vectors.repositoryRoot.appendingPathComponent("compose/\($0)"), encoding: .utf8)
        }.joined(separator: "\n")
        var periods: [String: Duration] = [:]
        var service: String?
        for line in compose.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("  "), !line.hasPrefix("   "), line.hasSuffix(":") {
                service = String(line.dropFirst(2).dropLast())
            } else if !line.hasPrefix(" "), !line.isEmpty {
                service = nil
            }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if let service, trimmed.hasPrefix("stop_grace_period:"),
                let seconds = Int(trimmed.dropFirst("stop_grace_period:".count).trimmingCharacters(in: .whitespaces).dropLast())
            {
                periods[service] = .seconds(seconds)
            }
        }
        return periods
    }
}
