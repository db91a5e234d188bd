import Logging
import Redis

extension SharedConfiguration {
    /// The longest a startup check may wait for Redis to answer; keeps a silent endpoint from hanging startup.
    static let startupCommandTimeout: Duration = .seconds(2)

    /// Connects a pool to Redis and loads the pipeline function library, failing fast: an unreachable,
    /// refusing or silent Redis throws ``PipelineError/redisUnavailable(variable:message:)`` naming
    /// `TOLLGATE_REDIS_URL` within a few seconds (connect timeout ≤ 2 s, then one answer within 2 s).
    ///
    /// The caller runs the returned pool in its `ServiceGroup` (it closes its connections on shutdown).
    package func connectRedis(poolSize: Int? = nil, clientName: String, logger: Logger) async throws -> RedisPool {
        // Preflight on one connection with a short command timeout: reachability, AUTH, the library.
        let preflight = try await connectOne(clientName: clientName, logger: logger, commandTimeout: Self.startupCommandTimeout)
        defer { preflight.close() }
        try await unavailableIfRedisFails { try await PipelineFunctions.library.load(on: preflight) }
        try await unavailableIfRedisFails { try await keys.checkLayout(on: preflight) }

        var configuration = redis
        configuration.clientName = clientName
        let pool = RedisPool(configuration: configuration, size: poolSize ?? redisConnections, logger: logger)
        do {
            try await unavailableIfRedisFails { try await pool.connect() }
        } catch {
            pool.close()
            throw error
        }
        logger.info(
            "Connected to Redis and loaded the pipeline functions",
            metadata: ["redis": "\(redis)", "library": "\(PipelineFunctions.library.name)"])
        return pool
    }

    /// Opens and connects one dedicated connection (for tools such as `tollctl`), failing fast like
    /// ``connectRedis(poolSize:clientName:logger:)`` with an error naming `TOLLGATE_REDIS_URL`.
    package func connectOne(clientName: String, logger: Logger, commandTimeout: Duration? = nil) async throws -> RedisConnection {
        var configuration = redis
        configuration.clientName = clientName
        if let commandTimeout { configuration.commandTimeout = min(configuration.commandTimeout, commandTimeout) }
        let connection = RedisConnection(configuration: configuration, logger: logger)
        do {
            try await unavailableIfRedisFails { try await connection.connect() }
        } catch {
            connection.close()
            throw error
        }
        return connection
    }

    /// A one-connection pool of its own for the operators' `/readyz` (never queued behind the service's work),
    /// failing fast like ``connectRedis(poolSize:clientName:logger:)``. Run it as a service (it closes on
    /// shutdown).
    package func connectOperatorsPool(clientName: String, logger: Logger) async throws -> RedisPool {
        var configuration = redis
        configuration.clientName = clientName
        let pool = RedisPool(configuration: configuration, size: 1, maxWaiters: 64, logger: logger)
        do {
            try await unavailableIfRedisFails { try await pool.connect() }
        } catch {
            pool.close()
            throw error
        }
        return pool
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
