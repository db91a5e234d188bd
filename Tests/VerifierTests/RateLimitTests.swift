import Foundation
import Logging
import Pipeline
import Redis
import TestSupport
import Testing

/// The fleet-wide token bucket against a real redis-server.
struct RateLimitTests {
    @Test func twoConcurrentLimitersNeverTakeMoreThanTheBucketAllows() async throws {
        try await withRedisServer { server in
            let logger = testLogger
            let first = RedisConnection(configuration: server.configuration(), logger: logger)
            let second = RedisConnection(configuration: server.configuration(), logger: logger)
            try await first.connect()
            try await second.connect()
            defer {
                first.close()
                second.close()
            }
            try await RateLimitFunctions.library.load(on: first)
            let bucket = TokenBucket(key: "tg:{rl:test}:production", ratePerSecond: 20, capacity: 5)

            let started = ContinuousClock.now
            let window = Duration.milliseconds(1000)
            async let a = Self.hammer(first, bucket, until: started + window)
            async let b = Self.hammer(second, bucket, until: started + window)
            let (grantsA, grantsB) = try await (a, b)
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let allowed = 5 + 20 * seconds
            #expect(Double(grantsA + grantsB) <= allowed + 1)
            // A full bucket grants its whole capacity at once, however slow the machine is.
            #expect(grantsA + grantsB >= 5)

            // Drained, it refills at its rate from Redis's own clock: after 400 ms (8 tokens' worth,
            // capped at 5) five takes in a row are granted.
            try await Task.sleep(for: .milliseconds(400))
            var refilled: [Bool] = []
            for _ in 0..<5 { refilled.append(try await RateLimitFunctions.take(on: first, bucket: bucket).granted) }
            #expect(refilled == [true, true, true, true, true])

            // The sandbox bucket of an endpoint class is a tenth of production's.
            let production = AppStoreEndpointClass.transactionInfo.bucket(prefix: "tg", sandbox: false)
            let sandbox = AppStoreEndpointClass.transactionInfo.bucket(prefix: "tg", sandbox: true)
            #expect(production.ratePerSecond == 50)
            #expect(sandbox.ratePerSecond == 5)
            #expect(production.key != sandbox.key)
            #expect(production.key.contains("{rl:transactionInfo}"))
        }
    }

    /// Takes tokens as fast as possible until `deadline`, and at least three times (so that two hammers
    /// try more often than a full bucket of 5 holds, however slow the machine); returns how many were granted.
    static func hammer(_ redis: RedisConnection, _ bucket: TokenBucket, until deadline: ContinuousClock.Instant) async throws -> Int {
        var granted = 0
        var attempts = 0
        while ContinuousClock.now < deadline || attempts < 3 {
            attempts += 1
            if try await RateLimitFunctions.take(on: redis, bucket: bucket).granted { granted += 1 }
        }
        return granted
    }

    @Test func limiterWaitsForATokenThenGivesUp() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            try await RateLimitFunctions.library.load(on: redis)
            let bucket = TokenBucket(key: "tg:{rl:slow}:production", ratePerSecond: 5, capacity: 1)
            let limiter = FleetRateLimiter(redis: redis, maximumWait: .milliseconds(400))
            // The clock starts before the first take: the second token exists 200 ms after the first was
            // taken, whenever the first reply reached us.
            let started = ContinuousClock.now
            try await limiter.acquire(bucket)
            try await limiter.acquire(bucket)  // waits for the next token
            #expect(ContinuousClock.now - started >= .milliseconds(150))
            // One token a minute: right after the first is taken, a limiter that may wait only 10 ms gives up,
            // however slow this machine is.
            let slow = TokenBucket(key: "tg:{rl:slower}:production", ratePerSecond: 1.0 / 60, capacity: 1)
            let tight = FleetRateLimiter(redis: redis, maximumWait: .milliseconds(10))
            try await tight.acquire(slow)
            await #expect(throws: RateLimitError.self) { try await tight.acquire(slow) }
        }
    }
}
