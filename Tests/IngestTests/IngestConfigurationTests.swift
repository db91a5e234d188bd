import Core
import Foundation
import Pipeline
import Redis
import TestSupport
import Testing

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
        #expect(defaults.redisPoolSize == 2)  // multiplexed: every enqueue round trip is pipelined on them
        #expect(defaults.maxReceiptBytes == 524_288)
        let custom = try IngestConfiguration(environment: [
            "TOLLGATE_HTTP_PORT": "9090",
            "TOLLGATE_SERVICE_KEYS": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
            "TOLLGATE_MAX_BACKLOG": "5", "TOLLGATE_REDIS_WAIT_REPLICAS": "1",
        ])
        #expect(custom.port == 9090)
        #expect(custom.serviceKeys.count == 2)
        #expect(custom.maxBacklog == 5)
        #expect(custom.waitReplicas == 1)
        #expect(custom.redisPoolSize == 68)  // each round trip's WAIT holds a connection
        let connections = try IngestConfiguration(environment: ["TOLLGATE_REDIS_CONNECTIONS": "5"])
        #expect(connections.redisPoolSize == 5)
        #expect(throws: ConfigurationError.self) { try IngestConfiguration(environment: ["TOLLGATE_REDIS_CONNECTIONS": "0"]) }
        #expect(throws: ConfigurationError.self) { try IngestConfiguration(environment: ["TOLLGATE_REDIS_IO_THREADS": "17"]) }
    }

    @Test(arguments: [
        ("TOLLGATE_HTTP_PORT", "70000"), ("TOLLGATE_MAX_BACKLOG", "-1"), ("TOLLGATE_ENQUEUE_QUEUE_LIMIT", "x"),
        ("TOLLGATE_ENQUEUE_BATCH_BYTES", "0"), ("TOLLGATE_ENQUEUE_ROUND_TRIPS", "257"),
        ("TOLLGATE_CLIENT_JWT_SECRET", "short"), ("TOLLGATE_SERVICE_KEYS", "tiny"), ("TOLLGATE_CATALOG", "/nonexistent.json"),
        ("TOLLGATE_REDIS_URL", "http://x"), ("TOLLGATE_SERVICE_KEYS", "a-31-byte-key-is-one-byte-short"),
        ("TOLLGATE_V1_NOTIFICATIONS", "maybe"), ("TOLLGATE_ORDER_TTL", "soon"), ("TOLLGATE_BACKLOG_BYTES_APPLE", "1000"),
        ("TOLLGATE_ROOT_CERTS", "/nonexistent.der"), ("TOLLGATE_CLIENT_JWT_MAX_LIFETIME", "5s"),
    ])
    func badValuesNameTheirVariable(variable: String, value: String) {
        do {
            _ = try IngestConfiguration(environment: [variable: value])
            Issue.record("\(variable)=\(value) was accepted")
        } catch {
            #expect(error.variable == variable, "\(error)")
        }
    }

    @Test func unreachableRedisFailsStartupNamingTheVariable() async throws {
        var configuration = try IngestConfiguration(environment: ["TOLLGATE_REDIS_URL": "redis://127.0.0.1:1"])
        configuration.port = 0
        let started = ContinuousClock.now
        do {
            _ = try await buildApplication(configuration: configuration, logger: testLogger)
            Issue.record("started without Redis")
        } catch let error as PipelineError {
            #expect(error.code == "redis_unavailable")
            #expect(error.message.contains("TOLLGATE_REDIS_URL"))
        }
        #expect(ContinuousClock.now - started < .seconds(10))
    }

    /// Issue 13, item 7: the placeholders shipped in `compose/*.env` stop startup, naming the variable.
    @Test(arguments: [
        ("TOLLGATE_CLIENT_JWT_SECRET", "replace-me-with-at-least-32-random-bytes-0000"),
        ("TOLLGATE_SERVICE_KEYS", "a-real-key-0123456789abcdefghijklmn,replace-me-service-key-0123456789abcdef"),
        ("TOLLGATE_REDIS_URL", "redis://:REPLACE-ME-redis-password@127.0.0.1:6379"),
        ("TOLLGATE_SHARED_SECRET", "replace-me"),
    ])
    func shippedPlaceholdersAreRefused(variable: String, value: String) {
        do {
            _ = try IngestConfiguration(environment: [variable: value])
            Issue.record("\(variable) with a placeholder was accepted")
        } catch {
            #expect(error.variable == variable, "\(error)")
            #expect(error.message.contains("placeholder"))
        }
    }

    /// V1 needs the shared secret; ingest's other settings read as documented.
    @Test func v1AndAbuseSettings() throws {
        #expect(throws: ConfigurationError.self) { try IngestConfiguration(environment: ["TOLLGATE_V1_NOTIFICATIONS": "true"]) }
        let custom = try IngestConfiguration(environment: [
            "TOLLGATE_V1_NOTIFICATIONS": "true", "TOLLGATE_SHARED_SECRET": "s3cret", "TOLLGATE_ORDER_TTL": "2d",
            "TOLLGATE_MAX_PENDING_ORDERS": "3", "TOLLGATE_USER_MAX_IN_FLIGHT": "4", "TOLLGATE_OPS_PORT": "9191",
            "TOLLGATE_BACKLOG_BYTES_CLIENT": "0", "TOLLGATE_HTTP_BODY_TIMEOUT": "2s",
        ])
        #expect(custom.v1SharedSecret == "s3cret")
        #expect(custom.orderLifetime == .seconds(2 * 86_400))
        #expect(custom.maxPendingOrders == 3 && custom.userMaxInFlight == 4)
        #expect(custom.opsPort == 9191)
        #expect(custom.backlogBytesClient == 0)
        #expect(custom.bodyTimeout == .seconds(2))
        let defaults = try IngestConfiguration(environment: [:])
        #expect(defaults.v1SharedSecret == nil && defaults.opsPort == nil)
    }
}
