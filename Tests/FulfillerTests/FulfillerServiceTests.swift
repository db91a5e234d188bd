import Core
import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@testable import fulfiller

@Suite struct FulfillerServiceTests {
    @Test func aMalformedEventIsDeadLetteredAndItsJobMarkedDead() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("ok1", product: "coins100")], job: "jobOK"))
            _ = try await h.redis.xadd(
                h.keys.verified().stream,
                fields: [
                    ("job.id", Array("jobBad".utf8)), ("event.version", Array("1".utf8)), ("event", Array("{not json".utf8)),
                ])
            let replica = try await RunningFulfiller.start(h.server, keys: h.keys, consumer: "replica")
            let dead = try await eventually { try await h.job("jobBad")?.state == .dead }
            try await replica.shutdown()
            #expect(dead)
            #expect(try await h.redis.xlen(h.keys.verified().deadLetter) == 1)
            #expect(try await h.pendingCount() == 0)
            #expect(try await h.coins("alice") == 100)
        }
    }

    @Test func configurationNamesTheVariableAtFault() throws {
        #expect(throws: ConfigurationError(variable: "TOLLGATE_CATALOG", problem: "is required (the path of the catalog JSON)")) {
            try FulfillerConfiguration(environment: [:])
        }
        do {
            _ = try FulfillerConfiguration(environment: [:])
        } catch {
            #expect("\(error)".contains("TOLLGATE_CATALOG"))
        }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("fulfiller-catalog-\(UUID().uuidString).json").path
        #expect(
            FileManager.default.createFile(atPath: path, contents: Data(#"{"products":[{"productId":"a","type":"gem","coins":1}]}"#.utf8)))
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try FulfillerConfiguration(environment: ["TOLLGATE_CATALOG": path])
            Issue.record("an unknown product type was accepted")
        } catch {
            #expect("\(error)".contains("unknown type 'gem'"))
        }
        #expect(FileManager.default.createFile(atPath: path, contents: try JSONEncoder().encode(testCatalog)))
        let configuration = try FulfillerConfiguration(environment: ["TOLLGATE_CATALOG": path, "TOLLGATE_CLAMP_REFUNDS": "true"])
        #expect(configuration.clampRefunds && configuration.catalog.product("coins100")?.coins == 100)
        #expect(throws: ConfigurationError.self) {
            try FulfillerConfiguration(environment: ["TOLLGATE_CATALOG": path, "TOLLGATE_CLAMP_REFUNDS": "maybe"])
        }
        #expect(configuration.eventsRetention == .seconds(7 * 24 * 3600))
        let forever = try FulfillerConfiguration(environment: ["TOLLGATE_CATALOG": path, "TOLLGATE_EVENTS_RETENTION_HOURS": "0"])
        #expect(forever.eventsRetention == nil)
        let day = try FulfillerConfiguration(environment: ["TOLLGATE_CATALOG": path, "TOLLGATE_EVENTS_RETENTION_HOURS": "24"])
        #expect(day.eventsRetention == .seconds(86_400))
        #expect(configuration.repeatFreeTrial == .allow)
        for (value, policy) in [("refuse", RepeatFreeTrial.refuse), ("ALLOW", .allow), (" refuse ", .refuse)] {
            let read = try FulfillerConfiguration(environment: ["TOLLGATE_CATALOG": path, "TOLLGATE_REPEAT_FREE_TRIAL": value])
            #expect(read.repeatFreeTrial == policy, "\(value)")
        }
        #expect(throws: ConfigurationError(variable: "TOLLGATE_REPEAT_FREE_TRIAL", problem: "must be allow or refuse, not 'deny'")) {
            try FulfillerConfiguration(environment: ["TOLLGATE_CATALOG": path, "TOLLGATE_REPEAT_FREE_TRIAL": "deny"])
        }
    }
}
