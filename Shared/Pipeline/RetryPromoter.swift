package import Logging
package import Redis
import ServiceLifecycle

/// Moves due retries from each stream's retry ZSET back onto the stream, every `interval`.
///
/// Safe with any number of replicas: each move is one atomic `pipeline_v4_promote` call, so a member is
/// promoted exactly once whoever runs it.
package final class RetryPromoter: Service {
    package let streams: [StreamKeys]
    package let interval: Duration
    package let batchSize: Int
    let redis: any RedisCommandExecutor
    let clock: PipelineClock
    let metrics: MetricHandles
    let logger: Logger

    package init(
        streams: [StreamKeys], redis: any RedisCommandExecutor, interval: Duration = .milliseconds(500),
        batchSize: Int = 100, clock: PipelineClock = .system, metrics: MetricHandles = MetricHandles(),
        logger: Logger
    ) {
        self.streams = streams
        self.redis = redis
        self.interval = interval
        self.batchSize = max(1, batchSize)
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
    }

    /// Promotes everything due now on every stream (in batches); returns how many moved per stream.
    @discardableResult
    package func promoteDue() async throws -> [String: Int] {
        var moved: [String: Int] = [:]
        for keys in streams {
            var total = 0
            while true {
                let count = try await PipelineFunctions.promote(
                    on: redis, stream: keys, nowMilliseconds: clock.nowMilliseconds(), limit: batchSize
                )
                total += count
                if count < batchSize || Task.isCancelled { break }
            }
            if total > 0 {
                PipelineMetrics(stream: keys.stream, handles: metrics).promoted(total)
                logger.debug("Promoted due retries", metadata: ["stream": "\(keys.stream)", "count": "\(total)"])
            }
            moved[keys.stream] = total
        }
        return moved
    }

    package func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await promoteDue()
            } catch {
                logger.error("Retry promotion failed", metadata: ["error": "\(error)"])
            }
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
            } catch {
                return
            }
        }
    }
}
