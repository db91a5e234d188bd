import CoreMetrics
import Foundation
import Logging
import Pipeline
import Redis
import ServiceLifecycle
import Synchronization

/// Samples the jobs streams' backlog periodically (not per request), for metrics and operators: per partition, the
/// most entries any consumer group (`XINFO GROUPS`) has not been delivered yet, or `XLEN` when there is no group
/// yet, summed over every partition of the layout; and each source's unfinished jobs and bytes (`tg:{p}:backlog`,
/// summed likewise), which the enqueue function itself checks against each partition's share of the sources'
/// budgets. Each sample also settles a partition's counters when nothing in it is unfinished
/// (``IngestFunctions/settleBacklog(keys:partition:on:)``). Every call touches one partition's slot.
///
/// A group's `lag` is not trusted alone: Redis 7.0 does not carry a group's `entries-read` through the AOF
/// or to replicas (`XREADGROUP` is propagated as `XCLAIM … LASTID`), so after a restart or a failover the
/// lag stays too high by every entry delivered since the last AOF rewrite or full sync, for good. A group
/// whose last-delivered id is at the stream's last entry has nothing waiting; otherwise the lag is capped
/// by `XLEN`, which always counts every undelivered entry (the janitor trims only below them).
final class BacklogMonitor: Service, Sendable {
    private let redis: any RedisCommandExecutor
    private let keys: Keys
    private let interval: Duration
    private let metrics: IngestMetrics
    private let logger: Logger
    private let latest = LatestValue()

    init(redis: any RedisCommandExecutor, keys: Keys, interval: Duration, metrics: IngestMetrics, logger: Logger) {
        self.redis = redis
        self.keys = keys
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
            var value = 0
            var held: [String: Int] = [:]
            for partition in keys.partitions {
                value += try await undelivered(keys.jobs(partition: partition).stream)
                _ = try await IngestFunctions.settleBacklog(keys: keys, partition: partition, on: redis)
                for (name, count) in try await redis.hgetall(keys.backlog(partition: partition)) {
                    held[name, default: 0] += Int(count) ?? 0
                }
            }
            latest.value = value
            metrics.backlog.record(value)
            // The sources' budgets, and the service keys' of their calls that ask Apple (`Job.Budget.service`).
            for source in [Job.Source.apple.rawValue, Job.Source.client.rawValue, Job.Budget.service] {
                metrics.sourceBacklog(source, jobs: held[source + ".jobs"] ?? 0, bytes: held[source + ".bytes"] ?? 0)
            }
        } catch {
            logger.debug("backlog sample failed", metadata: ["error": "\(error)"])
        }
    }

    /// The most entries of `stream` any group has not been delivered yet (`XLEN` without a group).
    private func undelivered(_ stream: String) async throws -> Int {
        let groups: [StreamGroupInfo]
        do {
            groups = try await redis.xinfoGroups(stream)
        } catch RedisError.server(_, let message) where message.contains("no such key") {
            groups = []
        }
        let length = try await redis.xlen(stream)
        guard !groups.isEmpty else { return length }
        let lastID = try await redis.lastEntryID(of: stream)
        return groups.map { $0.undelivered(streamLength: length, lastEntry: lastID) }.max() ?? 0
    }
}

/// An integer shared between the sampler and request handlers.
private final class LatestValue: Sendable {
    private let stored = Mutex(0)

    var value: Int {
        get { stored.withLock { $0 } }
        set { stored.withLock { $0 = newValue } }
    }
}
