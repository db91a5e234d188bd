package import Core
package import Logging
package import Metrics
package import Pipeline
package import Redis
package import ServiceLifecycle
import UnixSignals

/// The settings every Tollgate service shares, read from the environment and validated at startup.
///
/// Keys:
/// - `TOLLGATE_REDIS_URL` — `redis://[[user]:password@]host[:port][/db]` (`redis://127.0.0.1:6379`); a Redis
///   Cluster's seeds comma-separated, `redis://[[user]:password@]host:port,host:port,…` (database 0)
/// - `TOLLGATE_REDIS_CLUSTER` — `auto`, `yes` or `no` (`auto`: a cluster when the first seed that answers says
///   `cluster_enabled:1`). A cluster needs `TOLLGATE_PARTITIONS` > 1: one partition's keys are in different slots
/// - `TOLLGATE_KEY_PREFIX` — prefix of every Redis key, letters, digits, `_`, `-`, `.` (`tg`)
/// - `TOLLGATE_REDIS_CONNECTIONS` — multiplexed connections in each process's Redis pool, 1-64 (`2`); every
///   caller's commands are pipelined on them, so a few carry any load (blocking reads have their own)
/// - `TOLLGATE_REDIS_IO_THREADS` — event-loop threads that drive every Redis connection of a process, 1-16 (`1`)
/// - `TOLLGATE_PARTITIONS` — how many partitions the data is split into, 1-1024 (`1`: today's names on one
///   primary). Recorded in Redis by the first process to start (`tg:{p0}:layout`); a process configured otherwise
///   refuses to start (``PipelineError/layoutMismatch(configured:recorded:)``). See ``PartitionLayout``.
/// - `LOG_LEVEL` — trace, debug, info, notice, warning, error or critical (`info`)
/// - `TOLLGATE_SHUTDOWN_GRACE` — after SIGTERM, how long the process may finish what it accepted before its
///   tasks are cancelled (`25s`; ingest `40s`, to let a `?wait` of up to 30 s answer). Keep it below the
///   orchestrator's kill timeout (compose's `stop_grace_period`: 30 s, ingest 45 s), so that the process, not
///   SIGKILL, decides what is cut off.
///
/// Invalid values throw a ``Core/ConfigurationError`` naming the variable.
package struct SharedConfiguration: Sendable {
    package static let redisURLVariable = "TOLLGATE_REDIS_URL"
    package static let keyPrefixVariable = "TOLLGATE_KEY_PREFIX"
    package static let logLevelVariable = "LOG_LEVEL"
    package static let shutdownGraceVariable = "TOLLGATE_SHUTDOWN_GRACE"
    package static let defaultShutdownGrace = Duration.seconds(25)
    package static let defaultRedisURL = "redis://127.0.0.1:6379"
    package static let redisConnectionsVariable = "TOLLGATE_REDIS_CONNECTIONS"
    package static let redisIOThreadsVariable = "TOLLGATE_REDIS_IO_THREADS"
    package static let partitionsVariable = "TOLLGATE_PARTITIONS"
    package static let redisClusterVariable = "TOLLGATE_REDIS_CLUSTER"

    /// `TOLLGATE_REDIS_CLUSTER`: whether Redis is a Redis Cluster.
    package enum ClusterMode: String, Sendable, CaseIterable {
        /// Asks the first seed that answers (`INFO cluster`).
        case auto
        /// A cluster: the cluster-aware client (``Redis/RedisClusterClient``).
        case yes
        /// One server (a primary, perhaps with replicas): a pool of connections to the first seed.
        case no
    }

    /// Where Redis is. Its connect timeout is kept short so that startup fails fast.
    package var redis: RedisConfiguration
    /// Key naming under the configured prefix.
    package var keys: Keys
    /// The log level for every logger of the process.
    package var logLevel: Logger.Level
    /// How long graceful shutdown may take before the process's tasks are cancelled.
    package var shutdownGrace: Duration
    /// Multiplexed connections in the process's Redis pool.
    package var redisConnections = 2
    /// Whether Redis is a Redis Cluster.
    package var redisCluster = ClusterMode.auto

    package init(
        redis: RedisConfiguration = RedisConfiguration(), keys: Keys = Keys(), logLevel: Logger.Level = .info,
        shutdownGrace: Duration = Self.defaultShutdownGrace
    ) {
        self.redis = redis
        self.keys = keys
        self.logLevel = logLevel
        self.shutdownGrace = shutdownGrace
    }

    /// The service group of a process: `services` run until SIGTERM or SIGINT (when `handlesSignals`), then
    /// shut down gracefully for at most ``shutdownGrace``, after which what is still running is cancelled. Each
    /// cluster client among `services` gets a ``RedisClusterMetrics`` recording to `metrics` (the service's registry).
    package func serviceGroup(
        services: [any Service], handlesSignals: Bool = true, metrics: any MetricsFactory, logger: Logger
    ) -> ServiceGroup {
        // Each cluster client's redirects, refusals and refreshes on /metrics (``RedisClusterMetrics``).
        let services = services + RedisClusterMetrics.exporters(for: services, factory: metrics)
        var configuration = ServiceGroupConfiguration(
            services: services, gracefulShutdownSignals: handlesSignals ? [.sigterm, .sigint] : [], logger: logger)
        configuration.maximumGracefulShutdownDuration = shutdownGrace
        return ServiceGroup(configuration: configuration)
    }

    /// What the shipped example settings (`compose/*.env`) hold in place of every secret; a process refuses to
    /// start while any `TOLLGATE_*` value still contains it.
    package static let placeholderMarker = SecretRule.placeholderMarker

    /// Reads and validates the shared settings (pass `ProcessInfo.processInfo.environment`), by
    /// ``Core/EnvironmentReader``'s rules. Refuses any `TOLLGATE_*` value that still holds a shipped placeholder
    /// (``placeholderMarker``).
    package init(environment: [String: String]) throws(ConfigurationError) {
        try self.init(reader: EnvironmentReader(environment))
    }

    /// - Parameter defaultShutdownGrace: the service's own default for `TOLLGATE_SHUTDOWN_GRACE`.
    package init(reader: EnvironmentReader, defaultShutdownGrace: Duration = Self.defaultShutdownGrace) throws(ConfigurationError) {
        for (name, value) in reader.environment.sorted(by: { $0.key < $1.key })
        where name.hasPrefix("TOLLGATE_") && SecretRule.isPlaceholder(value) {
            throw ConfigurationError(
                variable: name, problem: "still holds a shipped placeholder ('\(Self.placeholderMarker)'); set a real value")
        }
        let url = reader.string(Self.redisURLVariable, default: Self.defaultRedisURL)
        do {
            redis = try RedisConfiguration(url: url)
        } catch let error as RedisError {
            if case .invalidURL(let message) = error {
                throw ConfigurationError(variable: Self.redisURLVariable, problem: "is not a usable Redis URL: \(message)")
            }
            throw ConfigurationError(variable: Self.redisURLVariable, problem: "is not a usable Redis URL: \(error.message)")
        } catch {
            throw ConfigurationError(variable: Self.redisURLVariable, problem: "is not a usable Redis URL: \(error)")
        }
        guard (1...65535).contains(redis.port) else {
            throw ConfigurationError(variable: Self.redisURLVariable, problem: "must have a port in 1...65535")
        }
        redis.connectTimeout = min(redis.connectTimeout, .seconds(2))

        let prefix = reader.string(Self.keyPrefixVariable, default: "tg")
        let allowed = prefix.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "_-.".unicodeScalars.contains($0)
        }
        guard prefix.count <= 64, allowed else {
            throw ConfigurationError(
                variable: Self.keyPrefixVariable, problem: "must be 1-64 letters, digits, '_', '-' or '.' (no ':', braces or spaces)")
        }
        let partitions = try reader.int(Self.partitionsVariable, default: 1, range: 1...PartitionLayout.maximum)
        do {
            keys = Keys(prefix: prefix, layout: try PartitionLayout(count: partitions))
        } catch {
            throw ConfigurationError(variable: Self.partitionsVariable, problem: error.message)
        }
        let mode = reader.string(Self.redisClusterVariable, default: ClusterMode.auto.rawValue).lowercased()
        guard let cluster = ClusterMode(rawValue: mode) else {
            throw ConfigurationError(variable: Self.redisClusterVariable, problem: "must be auto, yes or no")
        }
        redisCluster = cluster
        logLevel = try reader.logLevel(Self.logLevelVariable)
        shutdownGrace = try reader.duration(Self.shutdownGraceVariable, default: defaultShutdownGrace, minimum: .seconds(1))
        redisConnections = try reader.int(Self.redisConnectionsVariable, default: redisConnections, range: 1...64)
        // Read by the Redis module itself when its loops start; checked here so a bad value stops startup.
        _ = try reader.int(Self.redisIOThreadsVariable, default: 1, range: 1...16)
        try checkClusterSettings()
    }
}

extension SharedConfiguration {
    /// What can be checked about a cluster before connecting: several seeds name a cluster (not `no`), and a
    /// cluster (`yes`, or several seeds) has database 0 and more than one partition.
    func checkClusterSettings() throws(ConfigurationError) {
        let severalSeeds = !redis.additionalSeeds.isEmpty
        if severalSeeds, redisCluster == .no {
            throw ConfigurationError(
                variable: Self.redisURLVariable,
                problem: "names several nodes, a Redis Cluster's seeds, but \(Self.redisClusterVariable) is 'no'")
        }
        guard redisCluster == .yes || severalSeeds else { return }
        if redis.database != 0 {
            throw ConfigurationError(variable: Self.redisURLVariable, problem: "must use database 0 on a Redis Cluster")
        }
        if keys.layout.isSingle { throw Self.singlePartitionOnCluster }
    }

    /// One partition on a Redis Cluster: layout 1's keys (`{p0}`, `{u:<id>}`, `{otx:<id>}`) are in different slots, so
    /// the ledger's atomic steps would be refused.
    static var singlePartitionOnCluster: ConfigurationError {
        ConfigurationError(
            variable: partitionsVariable,
            problem: "must be more than 1 on a Redis Cluster (one partition's keys span several slots; 16 is a good start)")
    }
}
