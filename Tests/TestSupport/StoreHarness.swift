@preconcurrency import Crypto
package import Foundation
package import Logging
package import Pipeline
package import Redis

/// A real redis-server and the real `appstore-sim` binary, whose CA the services trust through
/// `TOLLGATE_ROOT_CERTS`: what the verifier's, reconciler's and tollctl's tests run against. ``with(_:)`` always
/// stops both.
package final class StoreHarness: Sendable {
    package let redisServer: RedisServer
    package let sim: SimProcess
    /// A connection of the test's own, for setting up and checking.
    package let redis: RedisConnection
    /// The keys of the harness's partitions (``with(partitions:simEnvironment:_:)``); ``environment(_:)`` sets
    /// `TOLLGATE_PARTITIONS` to match.
    package let keys: Keys
    package let logger = testLogger

    private init(redisServer: RedisServer, sim: SimProcess, redis: RedisConnection, keys: Keys) {
        self.redisServer = redisServer
        self.sim = sim
        self.redis = redis
        self.keys = keys
    }

    /// Runs `body` with a fresh Redis and simulator (`simEnvironment` added to its settings), always stopping both;
    /// the data split into `partitions` (`TOLLGATE_PARTITIONS`, 1 by default).
    package static func with(
        partitions: Int = 1, simEnvironment: [String: String] = [:], _ body: (StoreHarness) async throws -> Void
    ) async throws {
        let keys = Keys(layout: try PartitionLayout(count: partitions))
        try await withRedisServer { server in
            try await withSim(environment: simEnvironment) { sim in
                let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
                try await redis.connect()
                defer { redis.close() }
                // The layout and data version first, as the first service on a new Redis records them: a job the
                // test enqueues before the verifier's start would otherwise be older data it refuses.
                try await keys.checkLayout(on: redis)
                try await body(StoreHarness(redisServer: server, sim: sim, redis: redis, keys: keys))
            }
        }
    }

    /// The services' environment: Redis, the simulator, fast retries, `extra` last.
    package func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = sim.environment
        environment["TOLLGATE_REDIS_URL"] = redisServer.url
        environment["TOLLGATE_METRICS_PORT"] = "0"
        environment["TOLLGATE_METRICS_HOST"] = "127.0.0.1"
        environment["TOLLGATE_RETRY_BASE_MS"] = "50"
        environment["TOLLGATE_RETRY_CAP_MS"] = "400"
        environment["TOLLGATE_APPLE_TIMEOUT_MS"] = "2000"
        environment["TOLLGATE_CLAIM_INTERVAL_MS"] = "200"
        environment["LOG_LEVEL"] = "critical"
        if !keys.layout.isSingle { environment["TOLLGATE_PARTITIONS"] = String(keys.layout.count) }
        environment.merge(extra) { _, new in new }
        return environment
    }

    /// App Store Server API key settings: a fresh P-256 key in the simulator's directory (the simulator accepts
    /// any key unless `SIM_API_PUBLIC_KEY` is set).
    package func apiSettings() throws -> [String: String] {
        try testAPIKeySettings(directory: sim.directory)
    }

    /// Puts a job on the jobs stream, as ingest does.
    @discardableResult
    package func enqueue(kind: JobKind, payload: String, user: String? = "user-1", order: String? = nil) async throws -> String {
        let job = Job(
            id: Job.newID(), kind: kind, payload: Array(payload.utf8), source: kind == .receipt || kind == .transaction ? .client : .apple,
            userID: user, orderNo: order, receivedAtMilliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        _ = try await redis.xadd(keys.jobs().stream, fields: job.fields)
        return job.id
    }

    /// The job's status hash.
    package func status(_ jobID: String) async throws -> [String: String] {
        try await redis.hgetall(keys.job(jobID))
    }

    /// Polls until `condition` holds on the status, or fails after `timeout`.
    @discardableResult
    package func waitForStatus(
        _ jobID: String, timeout: Duration = .seconds(15), _ condition: ([String: String]) -> Bool
    ) async throws -> [String: String] {
        let found = try await eventuallyValue(timeout: timeout, interval: .milliseconds(25)) {
            let status = try await status(jobID)
            return condition(status) ? status : nil
        }
        guard let found else {
            throw ChildProcess.Failure(description: "job \(jobID) status never matched; last: \(try await status(jobID))")
        }
        return found
    }

    /// How many jobs exist (status hashes, kept for days; the janitor may already have trimmed the streams).
    package func jobCount() async throws -> Int {
        (try await redis.send("KEYS", keys.job("*")).array ?? []).count
    }

    /// The events on the verified stream.
    package func events() async throws -> [PurchaseEvent] {
        try await redis.xrange(keys.verified().stream).map { entry in
            try PurchaseEvent.decode(entry.fields[PurchaseEvent.streamField] ?? [])
        }
    }

    /// Polls until the verified stream holds `count` entries.
    package func waitForEvents(_ count: Int, timeout: Duration = .seconds(15)) async throws -> [PurchaseEvent] {
        let found = try await eventuallyValue(timeout: timeout, interval: .milliseconds(25)) {
            let events = try await events()
            return events.count >= count ? events : nil
        }
        guard let found else { throw ChildProcess.Failure(description: "the verified stream never held \(count) events") }
        return found
    }
}

/// Writes a fresh App Store Server API key (`api-key.p8`) into `directory`; returns the verifier's settings for it
/// (the simulator accepts any key unless `SIM_API_PUBLIC_KEY` is set).
package func testAPIKeySettings(directory: URL) throws -> [String: String] {
    let path = directory.appendingPathComponent("api-key.p8")
    try P256.Signing.PrivateKey().pemRepresentation.write(to: path, atomically: true, encoding: .utf8)
    return ["TOLLGATE_API_KEY_ID": "KEY123", "TOLLGATE_API_ISSUER_ID": "issuer-1", "TOLLGATE_API_PRIVATE_KEY_PATH": path.path]
}
