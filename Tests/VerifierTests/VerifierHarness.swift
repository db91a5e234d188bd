import Foundation
import Logging
import Pipeline
import Redis
import ServiceLifecycle
import TestSupport
@testable import Verification

/// A real redis-server, the real `appstore-sim` binary, and verifiers built in-process with `App.build`.
final class VerifierHarness: Sendable {
    let redisServer: RedisServer
    let sim: SimProcess
    let redis: RedisConnection
    let keys = Keys()
    let logger: Logger

    private init(redisServer: RedisServer, sim: SimProcess, redis: RedisConnection, logger: Logger) {
        self.redisServer = redisServer
        self.sim = sim
        self.redis = redis
        self.logger = logger
    }

    static func start() async throws -> VerifierHarness {
        let redisServer = try await RedisServer.start()
        let sim: SimProcess
        do {
            sim = try await SimProcess.start()
        } catch {
            await redisServer.shutdown()
            throw error
        }
        let redis = RedisConnection(configuration: redisServer.configuration(), logger: Logger(label: "test"))
        try await redis.connect()
        var logger = Logger(label: "verifier-test")
        logger.logLevel = .critical
        return VerifierHarness(redisServer: redisServer, sim: sim, redis: redis, logger: logger)
    }

    func stop() async {
        redis.close()
        sim.stop()
        await redisServer.shutdown()
    }

    /// Runs `body` with a fresh harness, always stopping it.
    static func with(_ body: (VerifierHarness) async throws -> Void) async throws {
        let harness = try await start()
        do {
            try await body(harness)
            await harness.stop()
        } catch {
            await harness.stop()
            throw error
        }
    }

    /// The verifier environment: Redis, the simulator, fast retries, `extra` last.
    func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var environment = sim.environment
        environment["TOLLGATE_REDIS_URL"] = redisServer.url
        environment["TOLLGATE_METRICS_PORT"] = "0"
        environment["TOLLGATE_METRICS_HOST"] = "127.0.0.1"
        environment["TOLLGATE_RETRY_BASE_MS"] = "50"
        environment["TOLLGATE_RETRY_CAP_MS"] = "400"
        environment["TOLLGATE_APPLE_TIMEOUT_MS"] = "2000"
        environment["TOLLGATE_CLAIM_INTERVAL_MS"] = "200"
        environment["LOG_LEVEL"] = "critical"
        environment.merge(extra) { _, new in new }
        return environment
    }

    /// Runs an in-process verifier built by `App.build` while `body` runs; returns its metrics port too.
    func withVerifier(_ extra: [String: String] = [:], _ body: (Int) async throws -> Void) async throws {
        let configuration = try VerifierConfiguration(environment: environment(extra))
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let group = try await VerifierServices.build(
            configuration: configuration, logger: logger, handlesSignals: false,
            onMetricsServerRunning: { port in
                continuation.yield(port)
                continuation.finish()
            })
        let task = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        let port = await iterator.next() ?? 0
        do {
            try await body(port)
        } catch {
            await group.triggerGracefulShutdown()
            _ = try? await task.value
            throw error
        }
        await group.triggerGracefulShutdown()
        _ = try? await task.value
    }

    /// Puts a job on the jobs stream, as ingest does.
    @discardableResult
    func enqueue(kind: JobKind, payload: String, user: String? = "user-1", order: String? = nil) async throws -> String {
        let job = Job(id: Job.newID(), kind: kind, payload: Array(payload.utf8), source: kind == .receipt || kind == .transaction ? .client : .apple,
                      userID: user, orderNo: order, receivedAtMilliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        _ = try await redis.xadd(keys.jobs().stream, fields: job.fields)
        return job.id
    }

    /// The job's status hash.
    func status(_ jobID: String) async throws -> [String: String] {
        let reply = try await redis.send("HGETALL", keys.job(jobID))
        var hash: [String: String] = [:]
        let items = reply.array ?? []
        for index in stride(from: 0, to: items.count - 1, by: 2) {
            if let name = items[index].string, let value = items[index + 1].string { hash[name] = value }
        }
        return hash
    }

    /// Polls until `condition` holds on the status, or fails after `timeout`.
    @discardableResult
    func waitForStatus(_ jobID: String, timeout: Duration = .seconds(15), _ condition: ([String: String]) -> Bool) async throws -> [String: String] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let status = try await status(jobID)
            if condition(status) { return status }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw ChildProcess.Failure(description: "job \(jobID) status never matched; last: \(try await status(jobID))")
    }

    /// The events on the verified stream.
    func events() async throws -> [PurchaseEvent] {
        try await redis.xrange(keys.verified().stream).map { entry in
            try PurchaseEvent.decode(entry.fields[PurchaseEvent.streamField] ?? [])
        }
    }

    /// Polls until the verified stream holds `count` entries.
    func waitForEvents(_ count: Int, timeout: Duration = .seconds(15)) async throws -> [PurchaseEvent] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let events = try await events()
            if events.count >= count { return events }
            try await Task.sleep(for: .milliseconds(25))
        }
        throw ChildProcess.Failure(description: "the verified stream never held \(count) events")
    }

    /// Pending entries of the verifiers' group.
    func pendingCount() async throws -> Int {
        try await redis.xpendingSummary(keys.jobs().stream, group: VerifierServices.consumerGroup).count
    }
}
