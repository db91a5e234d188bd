import Foundation
import Pipeline
import Redis
import Testing
import TestSupport

@testable import ingest

@Suite struct IngestConfigurationTests {
    @Test func defaultsAndOverrides() throws {
        let defaults = try IngestConfiguration(environment: [:])
        #expect(defaults.port == 8080)
        #expect(defaults.host == "127.0.0.1")
        #expect(defaults.clientJWTSecret == nil)
        #expect(defaults.catalog.products.isEmpty)
        #expect(defaults.enqueueRoundTrips == 64)
        #expect(defaults.enqueueBatchBytes == 16_384)
        #expect(defaults.redisPoolSize == 68)
        let custom = try IngestConfiguration(environment: [
            "TOLLGATE_HTTP_PORT": "9090", "TOLLGATE_SERVICE_KEYS": "aaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbb",
            "TOLLGATE_MAX_BACKLOG": "5", "TOLLGATE_REDIS_WAIT_REPLICAS": "1",
        ])
        #expect(custom.port == 9090)
        #expect(custom.serviceKeys.count == 2)
        #expect(custom.maxBacklog == 5)
        #expect(custom.waitReplicas == 1)
    }

    @Test(arguments: [
        ("TOLLGATE_HTTP_PORT", "70000"), ("TOLLGATE_MAX_BACKLOG", "-1"), ("TOLLGATE_ENQUEUE_QUEUE_LIMIT", "x"),
        ("TOLLGATE_ENQUEUE_BATCH_BYTES", "0"), ("TOLLGATE_ENQUEUE_ROUND_TRIPS", "257"),
        ("TOLLGATE_CLIENT_JWT_SECRET", "short"), ("TOLLGATE_SERVICE_KEYS", "tiny"), ("TOLLGATE_CATALOG", "/nonexistent.json"),
        ("TOLLGATE_REDIS_URL", "http://x"),
    ])
    func badValuesNameTheirVariable(variable: String, value: String) {
        do {
            _ = try IngestConfiguration(environment: [variable: value])
            Issue.record("\(variable)=\(value) was accepted")
        } catch let error as PipelineError {
            #expect(error.message.hasPrefix(variable))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func unreachableRedisFailsStartupNamingTheVariable() async throws {
        var configuration = try IngestConfiguration(environment: ["TOLLGATE_REDIS_URL": "redis://127.0.0.1:1"])
        configuration.port = 0
        let started = ContinuousClock.now
        do {
            _ = try await buildApplication(configuration: configuration, logger: IngestHarness.logger)
            Issue.record("started without Redis")
        } catch let error as PipelineError {
            #expect(error.code == "redis_unavailable")
            #expect(error.message.contains("TOLLGATE_REDIS_URL"))
        }
        #expect(ContinuousClock.now - started < .seconds(10))
    }
}
