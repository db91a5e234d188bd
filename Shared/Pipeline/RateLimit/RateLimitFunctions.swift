package import Redis

/// The `tollgate_ratelimit_v2` Redis Function library (`Lua/ratelimit.lua`): one token bucket per key, refilled
/// by the Redis server's own clock (`TIME`), so that replicas with skewed clocks still share one rate.
///
/// - `ratelimit_v2_take`  KEYS: bucket  ARGV: ratePerSecond, capacity, requested
///   → `[granted (1/0), waitMilliseconds]`: on a refusal, how long until enough tokens are there.
package enum RateLimitFunctions {
    package static let library = RedisFunctionLibrary(
        "ratelimit", version: 2, functions: ["take"], parts: [SharedLua.common, PackageResources.ratelimit_lua])

    /// Takes `requested` tokens from `bucket` if it holds them; returns whether it did and, if not, how
    /// long to wait.
    package static func take(
        on redis: any RedisCommandExecutor, bucket: TokenBucket, requested: Double = 1
    ) async throws -> (granted: Bool, wait: Duration) {
        let reply = try await library.call(
            "take", on: redis, keys: [bucket.key],
            arguments: [String(bucket.ratePerSecond), String(bucket.capacity), String(requested)])
        guard let parts = reply.array, parts.count == 2, let granted = parts[0].int, let wait = parts[1].int else {
            throw PipelineError.unexpectedReply("\(library.function("take")) returned \(reply)")
        }
        return (granted == 1, .milliseconds(max(0, wait)))
    }
}
