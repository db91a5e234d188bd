import Logging
import Redis

/// The settings every Tollgate service shares, read from the environment and validated at startup.
///
/// Keys:
/// - `TOLLGATE_REDIS_URL` — `redis://[[user]:password@]host[:port][/db]` (`redis://127.0.0.1:6379`)
/// - `TOLLGATE_KEY_PREFIX` — prefix of every Redis key, letters, digits, `_`, `-`, `.` (`tg`)
/// - `LOG_LEVEL` — trace, debug, info, notice, warning, error or critical (`info`)
///
/// Invalid values throw ``PipelineError/invalidConfiguration(variable:message:)`` naming the variable.
public struct SharedConfiguration: Sendable {
    public static let redisURLVariable = "TOLLGATE_REDIS_URL"
    public static let keyPrefixVariable = "TOLLGATE_KEY_PREFIX"
    public static let logLevelVariable = "LOG_LEVEL"
    public static let defaultRedisURL = "redis://127.0.0.1:6379"

    /// Where Redis is. Its connect timeout is kept short so that startup fails fast.
    public var redis: RedisConfiguration
    /// Key naming under the configured prefix.
    public var keys: Keys
    /// The log level for every logger of the process.
    public var logLevel: Logger.Level

    public init(redis: RedisConfiguration = RedisConfiguration(), keys: Keys = Keys(), logLevel: Logger.Level = .info) {
        self.redis = redis
        self.keys = keys
        self.logLevel = logLevel
    }

    /// What the shipped example settings (`compose/*.env`) hold in place of every secret; a process refuses to
    /// start while any `TOLLGATE_*` value still contains it.
    public static let placeholderMarker = "replace-me"

    /// Reads and validates the shared settings from `environment` (pass `ProcessInfo.processInfo.environment`).
    /// Refuses any `TOLLGATE_*` value that still holds a shipped placeholder (``placeholderMarker``).
    public init(environment: [String: String]) throws(PipelineError) {
        for (name, value) in environment.sorted(by: { $0.key < $1.key })
        where name.hasPrefix("TOLLGATE_") && value.lowercased().contains(Self.placeholderMarker) {
            throw .invalidConfiguration(variable: name, message: "still holds a shipped placeholder ('\(Self.placeholderMarker)'); set a real value")
        }
        let url = environment[Self.redisURLVariable] ?? Self.defaultRedisURL
        do {
            redis = try RedisConfiguration(url: url)
        } catch let error as RedisError {
            if case .invalidURL(let message) = error {
                throw .invalidConfiguration(variable: Self.redisURLVariable, message: message)
            }
            throw .invalidConfiguration(variable: Self.redisURLVariable, message: error.description)
        } catch {
            throw .invalidConfiguration(variable: Self.redisURLVariable, message: "\(error)")
        }
        guard (1...65535).contains(redis.port) else {
            throw .invalidConfiguration(variable: Self.redisURLVariable, message: "port must be 1-65535")
        }
        redis.connectTimeout = min(redis.connectTimeout, .seconds(2))

        let prefix = environment[Self.keyPrefixVariable] ?? "tg"
        let allowed = prefix.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "_-.".unicodeScalars.contains($0)
        }
        guard !prefix.isEmpty, prefix.count <= 64, allowed else {
            throw .invalidConfiguration(
                variable: Self.keyPrefixVariable,
                message: "must be 1-64 letters, digits, '_', '-' or '.' (no ':', braces or spaces)"
            )
        }
        keys = Keys(prefix: prefix)

        let levelText = environment[Self.logLevelVariable].map { $0.lowercased() } ?? "info"
        guard let level = Logger.Level(rawValue: levelText == "warn" ? "warning" : levelText) else {
            throw .invalidConfiguration(
                variable: Self.logLevelVariable,
                message: "'\(levelText)' is not one of trace, debug, info, notice, warning, error, critical"
            )
        }
        logLevel = level
    }
}
