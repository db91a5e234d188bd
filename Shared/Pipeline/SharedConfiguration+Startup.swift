import Logging
import Redis

extension SharedConfiguration {
    /// Connects a pool to Redis and loads the pipeline function library, failing fast: an unreachable or
    /// refusing Redis throws ``PipelineError/redisUnavailable(variable:message:)`` naming
    /// `TOLLGATE_REDIS_URL` within about the connect timeout (at most 2 s), never hanging.
    ///
    /// The caller runs the returned pool in its `ServiceGroup` (it closes its connections on shutdown).
    public func connectRedis(poolSize: Int = 8, clientName: String, logger: Logger) async throws -> RedisPool {
        var configuration = redis
        configuration.clientName = clientName
        let pool = RedisPool(configuration: configuration, size: poolSize, logger: logger)
        do {
            try await pool.connect()
            try await PipelineFunctions.load(on: pool)
        } catch let error as RedisError {
            pool.close()
            throw PipelineError.redisUnavailable(
                variable: Self.redisURLVariable,
                message: "cannot use Redis at \(redis) (\(error.description))"
            )
        } catch {
            pool.close()
            throw error
        }
        logger.info("Connected to Redis and loaded the pipeline functions", metadata: ["redis": "\(redis)", "library": "\(PipelineFunctions.libraryName)"])
        return pool
    }
}

extension SharedConfiguration {
    /// Opens and connects one dedicated connection (for tools such as `tollctl`), failing fast like
    /// ``connectRedis(poolSize:clientName:logger:)`` with an error naming `TOLLGATE_REDIS_URL`.
    public func connectOne(clientName: String, logger: Logger) async throws -> RedisConnection {
        var configuration = redis
        configuration.clientName = clientName
        let connection = RedisConnection(configuration: configuration, logger: logger)
        do {
            try await connection.connect()
        } catch let error as RedisError {
            connection.close()
            throw PipelineError.redisUnavailable(
                variable: Self.redisURLVariable,
                message: "cannot use Redis at \(redis) (\(error.description))"
            )
        }
        return connection
    }
}
