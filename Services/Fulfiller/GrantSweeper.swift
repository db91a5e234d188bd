import Ledger
import Logging
import Pipeline
import Redis
import ServiceLifecycle

/// Ends labelled grants on time (``Ledger/LedgerGrants``): every ``interval`` (15 s, so a grant's `grant.expired`
/// event is written within a minute of its `until`), each partition's due index `tg:{pN}:grants:due` is read up to
/// now and every grant past its `until` is removed with its event, one ledger call each. Several replicas may sweep
/// at once: the call removes a grant once, and a grant already gone writes nothing.
final class GrantSweeper: Service {
    let redis: any RedisCommandExecutor
    let keys: Keys
    let userEventLog: UserEventLog
    let interval: Duration
    let clock: PipelineClock
    let logger: Logger

    init(
        redis: any RedisCommandExecutor, keys: Keys, userEventLog: UserEventLog, interval: Duration = .seconds(15),
        clock: PipelineClock, logger: Logger
    ) {
        (self.redis, self.keys, self.userEventLog, self.interval, self.clock, self.logger) =
            (redis, keys, userEventLog, interval, clock, logger)
    }

    /// One pass over every partition; how many grants expired.
    func sweepOnce() async throws -> Int {
        var expired = 0
        for partition in keys.partitions {
            // A partition with more due than one batch is read again until it is done.
            while true {
                let batch = try await LedgerGrants.expireDue(
                    partition: partition, now: clock.nowMilliseconds(), keys: keys, userEventLog: userEventLog,
                    limit: 100, on: redis)
                expired += batch
                if batch < 100 { break }
            }
        }
        return expired
    }

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let expired = try await sweepOnce()
                if expired > 0 { logger.info("Grants expired", metadata: ["count": "\(expired)"]) }
            } catch {
                logger.error("Grant sweep failed", metadata: ["error": "\(error)"])
            }
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
            } catch {
                return
            }
        }
    }
}
