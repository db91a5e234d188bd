package import Logging
package import Redis

/// Keeps a stream entry from looking idle while its handler waits (the verifier on Apple, the exporter on
/// PostgreSQL): every `interval` it runs
/// `XCLAIM <stream> <group> <consumer> <interval/2> <id> JUSTID`, which resets the entry's idle time
/// (without counting a delivery), so that `XAUTOCLAIM` in other replicas takes over only entries whose
/// replica really stopped. The min-idle of half the interval keeps it from taking an entry that another
/// live replica is heartbeating.
package struct Heartbeat: Sendable {
    let redis: any RedisCommandExecutor
    let stream: String
    let group: String
    let consumer: String
    let entryID: String
    let interval: Duration
    let logger: Logger

    package init(
        redis: any RedisCommandExecutor, stream: String, group: String, consumer: String, entryID: String, interval: Duration,
        logger: Logger
    ) {
        self.redis = redis
        self.stream = stream
        self.group = group
        self.consumer = consumer
        self.entryID = entryID
        self.interval = interval
        self.logger = logger
    }

    /// Runs `body` while beating; the beat stops when `body` returns.
    package func run<Value: Sendable>(_ body: @Sendable () async -> Value) async -> Value {
        let beat = Task { await self.beat() }
        defer { beat.cancel() }
        return await body()
    }

    private func beat() async {
        let (seconds, attoseconds) = (interval / 2).components
        let minIdle = max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        while !Task.isCancelled {
            do {
                try await Task.sleep(for: interval)
                _ = try await redis.send(RedisCommand("XCLAIM", key: stream, group, consumer, minIdle, entryID, "JUSTID"))
            } catch is CancellationError {
                return
            } catch {
                logger.warning("Heartbeat failed", metadata: ["error": "\(error)"])
            }
        }
    }
}
