import AppStore
import Core
import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@testable import ingest

@Suite struct IngestConfigurationTests {
    /// The settings every ingest needs: the app (`TOLLGATE_BUNDLE_ID`).
    static let app = ["TOLLGATE_BUNDLE_ID": "com.example.app"]

    @Test func defaultsAndOverrides() throws {
        let defaults = try IngestConfiguration(environment: Self.app)
        #expect(defaults.port == 8080)
        #expect(defaults.host == "127.0.0.1")
        #expect(defaults.clientJWTSecret == nil)
        #expect(defaults.catalog.products.isEmpty)
        #expect(defaults.enqueueRoundTrips == 64)
        #expect(defaults.enqueueBatchBytes == 16_384)
        #expect(defaults.redisPoolSize == 2)  // multiplexed: every enqueue round trip is pipelined on them
        #expect(defaults.maxReceiptBytes == 524_288)
        let custom = try IngestConfiguration(
            environment: Self.app.merging([
                "TOLLGATE_HTTP_PORT": "9090",
                "TOLLGATE_SERVICE_KEYS": "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, support:read+grant:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb:c",
                "TOLLGATE_MAX_BACKLOG": "5", "TOLLGATE_REDIS_WAIT_REPLICAS": "1",
            ]) { $1 })
        #expect(custom.port == 9090)
        #expect(custom.serviceKeys.count == 2)
        // A bare key: every scope, named by its digest, never by itself; a scoped key's key is all after the second colon.
        #expect(custom.serviceKeys[0].isBare && custom.serviceKeys[0].scopes == Set(ServiceKey.Scope.allCases))
        #expect(custom.serviceKeys[0].name.hasPrefix("key-") && custom.serviceKeys[0].name.count == 12)
        #expect(!custom.serviceKeys[0].name.contains("aaaa"))
        #expect(custom.serviceKeys[1] == ServiceKey(name: "support", scopes: [.read, .grant], key: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb:c"))
        #expect(custom.maxBacklog == 5)
        #expect(custom.waitReplicas == 1)
        #expect(custom.redisPoolSize == 68)  // each round trip's WAIT holds a connection
        let connections = try IngestConfiguration(environment: Self.app.merging(["TOLLGATE_REDIS_CONNECTIONS": "5"]) { $1 })
        #expect(connections.redisPoolSize == 5)
        #expect(throws: ConfigurationError.self) {
            try IngestConfiguration(environment: Self.app.merging(["TOLLGATE_REDIS_CONNECTIONS": "0"]) { $1 })
        }
        #expect(throws: ConfigurationError.self) {
            try IngestConfiguration(environment: Self.app.merging(["TOLLGATE_REDIS_IO_THREADS": "17"]) { $1 })
        }
    }

    @Test(arguments: [
        ("TOLLGATE_HTTP_PORT", "70000"), ("TOLLGATE_MAX_BACKLOG", "-1"), ("TOLLGATE_ENQUEUE_QUEUE_LIMIT", "x"),
        ("TOLLGATE_ENQUEUE_BATCH_BYTES", "0"), ("TOLLGATE_ENQUEUE_ROUND_TRIPS", "257"),
        ("TOLLGATE_CLIENT_JWT_SECRET", "short"), ("TOLLGATE_SERVICE_KEYS", "tiny"), ("TOLLGATE_CATALOG", "/nonexistent.json"),
        ("TOLLGATE_REDIS_URL", "http://x"), ("TOLLGATE_SERVICE_KEYS", "a-31-byte-key-is-one-byte-short"),
        ("TOLLGATE_V1_NOTIFICATIONS", "maybe"), ("TOLLGATE_ORDER_TTL", "soon"), ("TOLLGATE_BACKLOG_BYTES_APPLE", "1000"),
        ("TOLLGATE_ROOT_CERTS", "/nonexistent.der"), ("TOLLGATE_CLIENT_JWT_MAX_LIFETIME", "5s"),
        // A scoped key too short, a misspelt or empty scope (never taken as a bare key with every scope), two names alike.
        ("TOLLGATE_SERVICE_KEYS", "shop:spend:short-key"), ("TOLLGATE_SERVICE_KEYS", "shop:spnd:0123456789abcdef0123456789abcdef"),
        ("TOLLGATE_SERVICE_KEYS", "shop::0123456789abcdef0123456789abcdef"),
        ("TOLLGATE_SERVICE_KEYS", "a:read:0123456789abcdef0123456789abcdef,a:spend:0123456789abcdef0123456789abcdeX"),
        // A key bound to a project the deployment does not serve, or to no valid project id (docs/PROJECTS.md).
        ("TOLLGATE_SERVICE_KEYS", "a@games:read:0123456789abcdef0123456789abcdef"),
        ("TOLLGATE_SERVICE_KEYS", "a@Games:read:0123456789abcdef0123456789abcdef"),
        // Per-key bounds of calls that ask Apple: a number, and only for a key that exists (issue 42 item 3).
        ("TOLLGATE_SERVICE_KEY_RATE", "0"), ("TOLLGATE_SERVICE_KEY_BURST", "0"), ("TOLLGATE_SERVICE_KEY_MAX_IN_FLIGHT", "x"),
        ("TOLLGATE_SERVICE_KEY_LIMITS", "nobody=1/2/3"), ("TOLLGATE_MAX_BACKLOG_SERVICE", "-1"),
        // One key string under two names (issue 42, item 12): which name a call records would be the last one's.
        ("TOLLGATE_SERVICE_KEYS", "a:read:0123456789abcdef0123456789abcdef,b:spend:0123456789abcdef0123456789abcdef"),
        ("TOLLGATE_SERVICE_KEYS", "0123456789abcdef0123456789abcdef,b:spend:0123456789abcdef0123456789abcdef"),
    ])
    func badValuesNameTheirVariable(variable: String, value: String) {
        do {
            _ = try IngestConfiguration(environment: Self.app.merging([variable: value]) { $1 })
            Issue.record("\(variable)=\(value) was accepted")
        } catch {
            #expect(error.variable == variable, "\(error)")
        }
    }

    @Test func unreachableRedisFailsStartupNamingTheVariable() async throws {
        var configuration = try IngestConfiguration(environment: Self.app.merging(["TOLLGATE_REDIS_URL": "redis://127.0.0.1:1"]) { $1 })
        configuration.port = 0
        let started = ContinuousClock.now
        do {
            _ = try await App.build(configuration: configuration, logger: testLogger)
            Issue.record("started without Redis")
        } catch let error as PipelineError {
            #expect(error.code == "redis_unavailable")
            #expect(error.message.contains("TOLLGATE_REDIS_URL"))
        }
        // A refused connection fails at once and the preflight's timeouts are 2 s each; 30 s leaves room for a loaded
        // machine and still fails a startup that keeps retrying.
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    /// Issue 42, item 12: a key string given twice is refused naming both names, never the key.
    @Test func oneKeyUnderTwoNamesIsRefusedWithoutTheKey() {
        let key = "0123456789abcdef0123456789abcdef"
        do {
            _ = try IngestConfiguration(
                environment: Self.app.merging(["TOLLGATE_SERVICE_KEYS": "shop:read:\(key),desk:grant+read:\(key)"]) { $1 })
            Issue.record("one key under two names was accepted")
        } catch {
            #expect(error.variable == "TOLLGATE_SERVICE_KEYS")
            #expect(error.message.contains("shop") && error.message.contains("desk"), "\(error)")
            #expect(!error.message.contains(key))
        }
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
            _ = try IngestConfiguration(environment: Self.app.merging([variable: value]) { $1 })
            Issue.record("\(variable) with a placeholder was accepted")
        } catch {
            #expect(error.variable == variable, "\(error)")
            #expect(error.message.contains("placeholder"))
        }
    }

    /// Each service key's bounds on the calls that ask Apple: the defaults, the settings for every key, and a named
    /// key's own (`name=rate/burst/inFlight`); a malformed entry names the variable.
    @Test func serviceKeyLimits() throws {
        let defaults = try IngestConfiguration(environment: Self.app)
        #expect(defaults.serviceKeyLimits.limit(for: "any") == .init(ratePerSecond: 1, burst: 10, maxInFlight: 10))
        #expect(defaults.maxBacklogService == 1000 && defaults.backlogBytesService == 4 << 20)
        let keys = "support:read+lookup:0123456789abcdef0123456789abcdef,ops:admin:0123456789abcdef0123456789abcdeX"
        let custom = try IngestConfiguration(
            environment: Self.app.merging([
                "TOLLGATE_SERVICE_KEYS": keys, "TOLLGATE_SERVICE_KEY_RATE": "0.5", "TOLLGATE_SERVICE_KEY_BURST": "4",
                "TOLLGATE_SERVICE_KEY_MAX_IN_FLIGHT": "2", "TOLLGATE_SERVICE_KEY_LIMITS": "ops=5/20/0",
                "TOLLGATE_MAX_BACKLOG_SERVICE": "50",
            ]) { $1 })
        #expect(custom.serviceKeys.first?.scopes == [.read, .lookup])
        #expect(custom.serviceKeyLimits.limit(for: "support") == .init(ratePerSecond: 0.5, burst: 4, maxInFlight: 2))
        #expect(custom.serviceKeyLimits.limit(for: "ops") == .init(ratePerSecond: 5, burst: 20, maxInFlight: 0))
        #expect(custom.maxBacklogService == 50)
        for bad in ["ops=5/20", "ops=0/1/1", "ops=1/1/1,ops=2/2/2", "ops"] {
            #expect(throws: ConfigurationError.self) {
                try IngestConfiguration(
                    environment: Self.app.merging(["TOLLGATE_SERVICE_KEYS": keys, "TOLLGATE_SERVICE_KEY_LIMITS": bad]) { $1 })
            }
        }
    }

    /// V1 needs the shared secret; ingest's other settings read as documented.
    @Test func v1AndAbuseSettings() throws {
        #expect(
            throws: ConfigurationError(variable: "TOLLGATE_SHARED_SECRET", problem: "is required (when TOLLGATE_V1_NOTIFICATIONS is on)")
        ) {
            try IngestConfiguration(environment: Self.app.merging(["TOLLGATE_V1_NOTIFICATIONS": "true"]) { $1 })
        }
        let custom = try IngestConfiguration(
            environment: Self.app.merging([
                "TOLLGATE_V1_NOTIFICATIONS": "true", "TOLLGATE_SHARED_SECRET": "s3cret", "TOLLGATE_ORDER_TTL": "2d",
                "TOLLGATE_MAX_PENDING_ORDERS": "3", "TOLLGATE_USER_MAX_IN_FLIGHT": "4", "TOLLGATE_OPS_PORT": "9191",
                "TOLLGATE_BACKLOG_BYTES_CLIENT": "0", "TOLLGATE_HTTP_BODY_TIMEOUT": "2s",
            ]) { $1 })
        #expect(custom.v1SharedSecret == "s3cret")
        #expect(custom.orderLifetime == .seconds(2 * 86_400))
        #expect(custom.maxPendingOrders == 3 && custom.userMaxInFlight == 4)
        #expect(custom.opsPort == 9191)
        #expect(custom.backlogBytesClient == 0)
        #expect(custom.bodyTimeout == .seconds(2))
        let defaults = try IngestConfiguration(environment: Self.app)
        #expect(defaults.v1SharedSecret == nil && defaults.opsPort == nil)
    }

    /// Issue 29 item 5: the door takes notifications of one app, read as the verifier reads it; without a bundle ID
    /// ingest does not start.
    @Test func theAppIsReadAsTheVerifierReadsIt() throws {
        #expect(throws: ConfigurationError(variable: "TOLLGATE_BUNDLE_ID", problem: "is required")) {
            try IngestConfiguration(environment: [:])
        }
        let defaults = try IngestConfiguration(environment: Self.app)
        #expect(defaults.app == AppIdentity(bundleId: "com.example.app", environment: .sandbox, acceptsSandbox: false))
        #expect(defaults.doorChainChecksPerSecond == 10 && defaults.doorChainCheckBurst == 20)
        let production = try IngestConfiguration(environment: [
            "TOLLGATE_BUNDLE_ID": "com.example.app", "TOLLGATE_ENVIRONMENT": "production", "TOLLGATE_APP_APPLE_ID": "42",
            "TOLLGATE_ACCEPT_SANDBOX": "true", "TOLLGATE_DOOR_CHAIN_CHECKS_PER_SECOND": "3", "TOLLGATE_DOOR_CHAIN_CHECK_BURST": "4",
        ])
        #expect(production.app == AppIdentity(bundleId: "com.example.app", appAppleId: 42, environment: .production, acceptsSandbox: true))
        #expect(production.doorChainChecksPerSecond == 3 && production.doorChainCheckBurst == 4)
        #expect(throws: ConfigurationError(variable: "TOLLGATE_APP_APPLE_ID", problem: "is required in production")) {
            try IngestConfiguration(environment: ["TOLLGATE_BUNDLE_ID": "b", "TOLLGATE_ENVIRONMENT": "production"])
        }
    }

    /// Issue 42: `TOLLGATE_SANDBOX_VALUE` is `testers` unless set to `everyone`; anything else stops ingest.
    @Test func theSandboxValueDefaultsToTesters() throws {
        #expect(try IngestConfiguration(environment: Self.app).sandboxValue == .testers)
        var everyone = Self.app
        everyone["TOLLGATE_SANDBOX_VALUE"] = "Everyone"
        #expect(try IngestConfiguration(environment: everyone).sandboxValue == .everyone)
        var wrong = Self.app
        wrong["TOLLGATE_SANDBOX_VALUE"] = "all"
        #expect(
            throws: ConfigurationError(variable: "TOLLGATE_SANDBOX_VALUE", problem: "must be testers or everyone, not 'all'")
        ) { try IngestConfiguration(environment: wrong) }
    }
}
