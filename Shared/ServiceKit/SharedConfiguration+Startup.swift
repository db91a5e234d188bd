import Core
package import Logging
import Pipeline
package import Redis

extension SharedConfiguration {
    /// The longest a startup check may wait for Redis to answer; keeps a silent endpoint from hanging startup.
    static let startupCommandTimeout: Duration = .seconds(2)

    /// Connects to Redis and loads the pipeline function library, failing fast: an unreachable,
    /// refusing or silent Redis throws ``PipelineError/redisUnavailable(variable:message:)`` naming
    /// `TOLLGATE_REDIS_URL` within a few seconds (connect timeout ≤ 2 s, then one answer within 2 s).
    ///
    /// On one server (``ClusterMode/no``, or `auto` and the server is not a cluster) the client is a ``RedisPool``
    /// of `poolSize` connections, exactly as before; on a Redis Cluster a ``RedisClusterClient`` (the functions
    /// loaded on every primary), which needs more than one partition (a ``Core/ConfigurationError`` naming
    /// `TOLLGATE_PARTITIONS` otherwise). The caller runs the returned client in its `ServiceGroup` (it closes its
    /// connections on shutdown); consumers get their partitions' blocking readers from it
    /// (``RedisClient/dedicatedConnection(forKey:clientName:)``).
    package func connectRedis(poolSize: Int? = nil, clientName: String, logger: Logger) async throws -> any RedisClient {
        // Several seeds name a cluster (a single server has one address): no preflight on the first seed alone.
        if redisCluster == .yes || !redis.additionalSeeds.isEmpty {
            return try await connectCluster(clientName: clientName, logger: logger)
        }
        // Preflight on one connection with a short command timeout: reachability, AUTH, cluster or not, the library.
        let preflight = try await connectOne(clientName: clientName, logger: logger, commandTimeout: Self.startupCommandTimeout)
        defer { preflight.close() }
        if try await isCluster(preflight: preflight) {
            return try await connectCluster(clientName: clientName, logger: logger)
        }
        try await unavailableIfRedisFails { try await PipelineFunctions.library.load(on: preflight) }
        try await unavailableIfRedisFails { try await keys.checkLayout(on: preflight) }

        var configuration = redis
        configuration.clientName = clientName
        let pool = RedisPool(configuration: configuration, size: poolSize ?? redisConnections, logger: logger)
        try await connecting(pool, close: { $0.close() }, connect: { try await $0.connect() })
        logger.info(
            "Connected to Redis and loaded the pipeline functions",
            metadata: ["redis": "\(redis)", "library": "\(PipelineFunctions.library.name)"])
        return pool
    }

    /// Whether the one server named is a cluster node: `no` says not; `auto` asks it (`INFO cluster`).
    private func isCluster(preflight: RedisConnection) async throws -> Bool {
        switch redisCluster {
        case .yes: return true
        case .no: return false
        case .auto:
            var enabled = false
            try await unavailableIfRedisFails {
                let info = try await preflight.send("INFO", "cluster").string ?? ""
                enabled = info.split(whereSeparator: \.isNewline).contains { $0.hasPrefix("cluster_enabled:1") }
            }
            return enabled
        }
    }

    /// The cluster client, connected to every primary, with the pipeline functions loaded on each and the
    /// partition layout checked (``Keys/checkLayout(on:)``, in the control slot).
    private func connectCluster(clientName: String, logger: Logger) async throws -> RedisClusterClient {
        guard !keys.layout.isSingle else { throw Self.singlePartitionOnCluster }
        var configuration = redis
        configuration.clientName = clientName
        let client: RedisClusterClient
        do {
            client = try RedisClusterClient(configuration: configuration, logger: logger)
        } catch {
            throw ConfigurationError(variable: Self.redisURLVariable, problem: "is not usable for a Redis Cluster: \(error)")
        }
        do {
            try await unavailableIfRedisFails {
                try await client.connect()
                try await PipelineFunctions.library.load(on: client)
                try await keys.checkLayout(on: client)
            }
        } catch {
            client.close()
            throw error
        }
        logger.info(
            "Connected to Redis Cluster and loaded the pipeline functions",
            metadata: [
                "redis": "\(redis)", "primaries": "\(client.slotMap.allPrimaries.count)",
                "partitions": "\(keys.layout.count)", "library": "\(PipelineFunctions.library.name)",
            ])
        return client
    }

    /// Opens and connects one dedicated connection (for tools such as `tollctl`), failing fast like
    /// ``connectRedis(poolSize:clientName:logger:)`` with an error naming `TOLLGATE_REDIS_URL`.
    package func connectOne(clientName: String, logger: Logger, commandTimeout: Duration? = nil) async throws -> RedisConnection {
        var configuration = redis
        configuration.clientName = clientName
        if let commandTimeout { configuration.commandTimeout = min(configuration.commandTimeout, commandTimeout) }
        let connection = RedisConnection(configuration: configuration, logger: logger)
        try await connecting(connection, close: { $0.close() }, connect: { try await $0.connect() })
        return connection
    }

    /// A client for tools such as `tollctl` that read or fix any partition: a one-connection pool on one server,
    /// a cluster client on a Redis Cluster (picked like ``connectRedis(poolSize:clientName:logger:)``), connected,
    /// failing fast with an error naming `TOLLGATE_REDIS_URL`. It loads no functions and records no layout.
    package func connectTool(clientName: String, logger: Logger, commandTimeout: Duration) async throws -> any RedisClient {
        var configuration = redis
        configuration.clientName = clientName
        configuration.commandTimeout = min(configuration.commandTimeout, commandTimeout)
        var cluster = redisCluster == .yes || !redis.additionalSeeds.isEmpty
        if !cluster, redisCluster == .auto {
            let preflight = try await connectOne(clientName: clientName, logger: logger, commandTimeout: Self.startupCommandTimeout)
            defer { preflight.close() }
            cluster = try await isCluster(preflight: preflight)
        }
        if cluster {
            guard !keys.layout.isSingle else { throw Self.singlePartitionOnCluster }
            let client = try RedisClusterClient(configuration: configuration, retryWindow: commandTimeout, logger: logger)
            try await connecting(client, close: { $0.close() }, connect: { try await $0.connect() })
            return client
        }
        let pool = RedisPool(configuration: configuration, size: 1, logger: logger)
        try await connecting(pool, close: { $0.close() }, connect: { try await $0.connect() })
        return pool
    }

    /// A worker's two Redis clients: ``connectRedis(poolSize:clientName:logger:)`` with `libraries` loaded on it, and
    /// the operators' pool beside it (`<clientName>-ops`); the first is closed again when anything after it fails. The
    /// one start of every worker service (fulfiller, verifier, notifier), so none repeats it.
    package func connectWorker(
        clientName: String, libraries: [RedisFunctionLibrary], logger: Logger
    ) async throws -> (redis: any RedisClient, operators: any RedisClient) {
        let redis = try await connectRedis(clientName: clientName, logger: logger)
        do {
            for library in libraries { try await library.load(on: redis) }
            let operators = try await connectOperatorsPool(clientName: "\(clientName)-ops", logger: logger, like: redis)
            return (redis, operators)
        } catch {
            redis.close()
            throw error
        }
    }

    /// A client of its own for the operators' `/readyz` (never queued behind the service's work), failing fast
    /// like ``connectRedis(poolSize:clientName:logger:)``: a one-connection pool, or, when `main` (the service's
    /// client) is a cluster client, a cluster client of its own. Run it as a service (it closes on shutdown).
    package func connectOperatorsPool(clientName: String, logger: Logger, like main: any RedisClient) async throws -> any RedisClient {
        var configuration = redis
        configuration.clientName = clientName
        if main is RedisClusterClient {
            let client = try RedisClusterClient(configuration: configuration, logger: logger)
            try await connecting(client, close: { $0.close() }, connect: { try await $0.connect() })
            return client
        }
        let pool = RedisPool(configuration: configuration, size: 1, maxWaiters: 64, logger: logger)
        try await connecting(pool, close: { $0.close() }, connect: { try await $0.connect() })
        return pool
    }

    /// Connects `client`, or closes it and throws (a Redis error as ``PipelineError/redisUnavailable(variable:message:)``).
    private func connecting<Client>(
        _ client: Client, close: (Client) -> Void, connect: (Client) async throws -> Void
    ) async throws {
        do {
            try await unavailableIfRedisFails { try await connect(client) }
        } catch {
            close(client)
            throw error
        }
    }

    /// Runs `body`, turning Redis errors into ``PipelineError/redisUnavailable(variable:message:)``.
    private func unavailableIfRedisFails(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as RedisError {
            throw PipelineError.redisUnavailable(
                variable: Self.redisURLVariable,
                message: "cannot use Redis at \(redis) (\(error.description))"
            )
        }
    }
}
