import Core
import Ledger
import Logging
import Pipeline
import Redis
import ServiceLifecycle

/// Ends labelled grants on time (``Ledger/LedgerGrants``): every ``interval`` (15 s, so a grant's `grant.expired`
/// event is written within a minute of its `until`), each project's due index of each partition, `tg:{pN}:grants:due`
/// (`tg:<id>:{pN}:grants:due` outside the default project, docs/PROJECTS.md), is read up to now and every grant past
/// its `until` is removed with its event (which carries its project), one ledger call each. Several replicas may sweep
/// at once: the call removes a grant once, and a grant already gone writes nothing.
final class GrantSweeper: Service {
    let redis: any RedisCommandExecutor
    let keys: Keys
    /// The projects whose grants it ends: the default one and every project the fulfiller has a catalog for.
    let projects: [ProjectID]
    let userEventLog: UserEventLog
    let interval: Duration
    let clock: PipelineClock
    let logger: Logger

    init(
        redis: any RedisCommandExecutor, keys: Keys, projects: [ProjectID] = [.default], userEventLog: UserEventLog,
        interval: Duration = .seconds(15), clock: PipelineClock, logger: Logger
    ) {
        (self.redis, self.keys, self.projects, self.userEventLog, self.interval, self.clock, self.logger) =
            (redis, keys, projects, userEventLog, interval, clock, logger)
    }

    /// One pass over every project's partitions; how many grants expired.
    func sweepOnce() async throws -> Int {
        var expired = 0
        for project in projects {
            expired += try await sweepOnce(keys: keys.inProject(project))
        }
        return expired
    }

    private func sweepOnce(keys: Keys) async throws -> Int {
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
