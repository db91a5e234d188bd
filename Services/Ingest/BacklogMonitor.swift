import Foundation
import Logging
import Redis
import ServiceLifecycle

/// Samples the jobs stream's backlog periodically (not per request): the largest `lag` among its consumer
/// groups (`XINFO GROUPS`), or `XLEN` when there is no group yet or Redis cannot tell the lag. Enqueues are
/// refused with `503 overloaded` while the last sample exceeds `TOLLGATE_MAX_BACKLOG`.
final class BacklogMonitor: Service, Sendable {
    private let redis: any RedisCommandExecutor
    private let stream: String
    private let interval: Duration
    private let metrics: IngestMetrics
    private let logger: Logger
    private let latest = LatestValue()

    init(redis: any RedisCommandExecutor, stream: String, interval: Duration, metrics: IngestMetrics, logger: Logger) {
        self.redis = redis
        self.stream = stream
        self.interval = interval
        self.metrics = metrics
        self.logger = logger
    }

    /// The last sampled backlog.
    var backlog: Int { latest.value }

    func run() async throws {
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await self.sample()
                try await Task.sleep(for: self.interval)
            }
        }
    }

    /// Takes one sample now; keeps the previous value when Redis does not answer.
    func sample() async {
        do {
            let groups: [StreamGroupInfo]
            do {
                groups = try await redis.xinfoGroups(stream)
            } catch RedisError.server(_, let message) where message.contains("no such key") {
                groups = []
            }
            var value = groups.compactMap(\.lag).max() ?? 0
            if groups.isEmpty || groups.contains(where: { $0.lag == nil }) {
                value = max(value, try await redis.xlen(stream))
            }
            latest.value = value
            metrics.backlog.record(value)
        } catch {
            logger.debug("backlog sample failed", metadata: ["error": "\(error)"])
        }
    }
}

/// An integer shared between the sampler and request handlers.
///
/// `@unchecked Sendable` is safe: `stored` is only read or written while holding `lock`.
private final class LatestValue: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = 0

    var value: Int {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
