import Core
import Logging
import Pipeline
import Redis
import ServiceKit
import TestSupport
import Testing

@Suite struct SharedConfigurationTests {
    @Test func defaultsRunOnOneMachine() throws {
        let configuration = try SharedConfiguration(environment: [:])
        #expect(configuration.redis.host == "127.0.0.1")
        #expect(configuration.redis.port == 6379)
        #expect(configuration.keys.prefix == "tg")
        #expect(configuration.logLevel == .info)
        #expect(configuration.redis.connectTimeout <= .seconds(2))
    }

    @Test func readsTheVariables() throws {
        let configuration = try SharedConfiguration(environment: [
            "TOLLGATE_REDIS_URL": "redis://:secret@redis.internal:6380/2",
            "TOLLGATE_KEY_PREFIX": "prod",
            "LOG_LEVEL": "DEBUG",
        ])
        #expect(configuration.redis.host == "redis.internal")
        #expect(configuration.redis.port == 6380)
        #expect(configuration.redis.database == 2)
        #expect(configuration.redis.password == "secret")
        #expect(configuration.keys.jobs().stream == "prod:{p0}:jobs")
        #expect(configuration.logLevel == .debug)
    }

    @Test(arguments: [
        "http://127.0.0.1:6379", "redis://127.0.0.1:99999", "redis://127.0.0.1:0",
        "redis://127.0.0.1:port", "redis://", "127.0.0.1:6379",
    ])
    func malformedRedisURLNamesTheVariable(url: String) {
        #expect {
            try SharedConfiguration(environment: ["TOLLGATE_REDIS_URL": url])
        } throws: { error in
            guard let error = error as? ConfigurationError else { return false }
            return error.variable == "TOLLGATE_REDIS_URL" && error.code == "invalid_configuration"
                && error.message.hasPrefix("TOLLGATE_REDIS_URL ")
        }
    }

    /// Several seeds name a Redis Cluster, which needs more than one partition and database 0; `no` with several seeds,
    /// and a mode other than auto, yes or no, are refused, each naming its variable.
    @Test func clusterSettingsAreCheckedBeforeConnecting() throws {
        let seeds = "redis://127.0.0.1:7000,127.0.0.1:7001"
        let cluster = try SharedConfiguration(environment: ["TOLLGATE_REDIS_URL": seeds, "TOLLGATE_PARTITIONS": "16"])
        #expect(cluster.redis.seeds.map(\.port) == [7000, 7001])
        #expect(cluster.redisCluster == .auto)
        #expect(try SharedConfiguration(environment: [:]).redisCluster == .auto)
        let refusals: [([String: String], String)] = [
            (["TOLLGATE_REDIS_URL": seeds], "TOLLGATE_PARTITIONS"),
            (["TOLLGATE_REDIS_CLUSTER": "yes"], "TOLLGATE_PARTITIONS"),
            (["TOLLGATE_REDIS_URL": seeds, "TOLLGATE_PARTITIONS": "16", "TOLLGATE_REDIS_CLUSTER": "no"], "TOLLGATE_REDIS_URL"),
            (
                ["TOLLGATE_REDIS_URL": "redis://127.0.0.1:7000/2", "TOLLGATE_PARTITIONS": "16", "TOLLGATE_REDIS_CLUSTER": "yes"],
                "TOLLGATE_REDIS_URL"
            ),
            (["TOLLGATE_REDIS_CLUSTER": "maybe"], "TOLLGATE_REDIS_CLUSTER"),
        ]
        for (environment, variable) in refusals {
            #expect(configurationError(environment)?.variable == variable, "\(environment)")
        }
        #expect(configurationError(["TOLLGATE_REDIS_URL": seeds])?.message.contains("more than 1 on a Redis Cluster") == true)
        #expect(try SharedConfiguration(environment: ["TOLLGATE_REDIS_CLUSTER": "NO"]).redisCluster == .no)
    }

    @Test func outOfRangePortSaysSo() {
        #expect {
            try SharedConfiguration(environment: ["TOLLGATE_REDIS_URL": "redis://localhost:70000"])
        } throws: { error in
            "\(error)".contains("TOLLGATE_REDIS_URL") && "\(error)".contains("65535")
        }
    }

    @Test(arguments: [
        ("TOLLGATE_KEY_PREFIX", "a b"), ("TOLLGATE_KEY_PREFIX", "{x}"),
        ("TOLLGATE_KEY_PREFIX", "a:b"), ("LOG_LEVEL", "loud"),
    ])
    func otherBadSettingsNameTheirVariable(variable: String, value: String) {
        #expect {
            try SharedConfiguration(environment: [variable: value])
        } throws: { error in
            (error as? ConfigurationError)?.variable == variable
        }
    }

    @Test func unreachableRedisFailsFastNamingTheVariable() async throws {
        // A loopback port nobody listens on: start a server for its port, then stop it.
        let server = try await RedisServer.start()
        await server.shutdown()
        let configuration = try SharedConfiguration(environment: ["TOLLGATE_REDIS_URL": server.url])

        let started = ContinuousClock.now
        await #expect {
            _ = try await configuration.connectRedis(poolSize: 2, clientName: "test", logger: testLogger)
        } throws: { error in
            guard let error = error as? PipelineError, case .redisUnavailable = error else { return false }
            return error.message.contains("TOLLGATE_REDIS_URL") && error.code == "redis_unavailable"
        }
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    /// A Redis that accepts the connection and never answers stops startup (at the 2 s startup bound on connect
    /// timeouts, checked above) instead of hanging; the bound here leaves a loaded machine room.
    @Test func silentRedisFailsFastNamingTheVariable() async throws {
        let endpoint = try SilentListener()
        defer { endpoint.close() }
        let configuration = try SharedConfiguration(environment: ["TOLLGATE_REDIS_URL": "redis://127.0.0.1:\(endpoint.port)"])
        let started = ContinuousClock.now
        await #expect {
            _ = try await configuration.connectRedis(poolSize: 2, clientName: "test", logger: testLogger)
        } throws: { error in
            guard let error = error as? PipelineError, case .redisUnavailable = error else { return false }
            return error.message.contains("TOLLGATE_REDIS_URL")
        }
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test func reachableRedisGetsTheFunctionLibrary() async throws {
        try await withRedisServer { server in
            let configuration = try SharedConfiguration(environment: ["TOLLGATE_REDIS_URL": server.url])
            let pool = try await configuration.connectRedis(poolSize: 2, clientName: "test", logger: testLogger)
            defer { pool.close() }
            // One server that is no cluster node: a pool, as before.
            #expect(pool is RedisPool)
            let keys = configuration.keys.jobs()
            #expect(try await PipelineFunctions.promote(on: pool, stream: keys, nowMilliseconds: 0, limit: 10) == 0)
            let libraries = try await pool.send("FUNCTION", "LIST", "LIBRARYNAME", PipelineFunctions.library.name)
            #expect(libraries.array?.count == 1)
        }
    }
}

/// The configuration error `environment` is refused with, or nil when it is accepted.
func configurationError(_ environment: [String: String]) -> ConfigurationError? {
    do {
        _ = try SharedConfiguration(environment: environment)
        return nil
    } catch {
        return error
    }
}
