package import Redis

/// Waits for a token of the fleet-wide bucket before each App Store Server API call, so that N replicas
/// together stay under Apple's per-app limits. The buckets live in Redis (``RateLimitFunctions``).
package struct FleetRateLimiter: Sendable {
    let redis: any RedisCommandExecutor
    /// The longest a caller waits in total before giving up with ``RateLimitError``.
    package var maximumWait: Duration

    package init(redis: any RedisCommandExecutor, maximumWait: Duration = .seconds(5)) {
        self.redis = redis
        self.maximumWait = maximumWait
    }

    /// Takes one token from `bucket`, waiting (as the bucket says) up to ``maximumWait``.
    /// - Throws: ``RateLimitError`` when no token came in time (callers retry later); Redis errors.
    package func acquire(_ bucket: TokenBucket) async throws {
        var waited = Duration.zero
        while true {
            let (granted, wait) = try await RateLimitFunctions.take(on: redis, bucket: bucket)
            if granted { return }
            let pause = max(wait, .milliseconds(1))
            guard waited + pause <= maximumWait else {
                throw RateLimitError(bucket: bucket.key, retryAfter: pause)
            }
            try await Task.sleep(for: pause)
            waited += pause
        }
    }
}
