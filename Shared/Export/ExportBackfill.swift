import Core
import Ledger
package import Logging
package import Pipeline
import PostgresNIO
package import Redis

/// `tollctl export --since DATE` (docs/EXPORT.md): rebuilds the tables from the ledger. The events still held — every
/// partition's events stream from `since`, and each user's own log (``UserEventLog``: the newest 1000 per user) — are
/// written as the exporter writes them; then every user's account, grants and transaction records (all of them:
/// they are the state now, not history). Every write is the exporter's idempotent one, so running it beside live
/// exporters, or twice, changes nothing that is right. What it cannot write — an event it cannot read, a write
/// PostgreSQL refuses for what it holds — is skipped and named in ``Report/skipped``, and the rest goes on; an
/// unreachable database or Redis stops it (run it again).
package struct ExportBackfill: Sendable {
    package struct Report: Sendable, Equatable {
        package var events = 0
        package var users = 0
        package var transactions = 0
        package var unreadable = 0
        /// What was not written, one line each (`event <id> (entry <id>): <why>`, `user <id>: <why>`).
        package var skipped: [String] = []
    }

    let redis: any RedisCommandExecutor
    let keys: Keys
    let writer: ExportWriter
    let logger: Logger

    package init(redis: any RedisCommandExecutor, keys: Keys, writer: ExportWriter, logger: Logger) {
        self.redis = redis
        self.keys = keys
        self.writer = writer
        self.logger = logger
    }

    /// Exports what the ledger holds; events from `sinceMilliseconds` on.
    package func run(sinceMilliseconds: Int64) async throws -> Report {
        var report = Report()
        for partition in keys.partitions {
            var start = "\(max(0, sinceMilliseconds))-0"
            while true {
                let entries = try await redis.xrange(keys.events(partition: partition).stream, start: start, count: 500)
                // The streams are every project's: only this one's entries (``Keys/project``).
                for entry in entries where ProjectID(field: entry.string("project")) == keys.project {
                    try await export(entry, since: sinceMilliseconds, into: &report)
                }
                guard entries.count == 500, let last = entries.last.flatMap({ StreamID($0.id) }) else { break }
                start = "(\(last)"
            }
        }
        try await redis.scanKeys(match: keys.accountPattern) { found in
            for key in found {
                // Each side of the user (``Pipeline/LedgerSide``): its own log, records and row.
                guard let (user, side) = keys.account(ofKey: key) else { continue }
                for entry in try await redis.xrange(keys.on(side).userEvents(user: user)) {
                    try await export(entry, since: sinceMilliseconds, into: &report)
                }
                var first = 0
                repeat {
                    let snapshot = try await ExportSnapshot.user(user, side: side, keys: keys, first: first, on: redis)
                    do {
                        try await writer.write(snapshot)
                        report.transactions += snapshot.transactions.count
                    } catch {
                        guard let reason = ExportHandler.refusal(error) else { throw error }
                        let name = side == .sandbox ? "user \(user) (sandbox side)" : "user \(user)"
                        report.skipped.append("\(name), records \(first + 1)…\(first + snapshot.transactions.count): \(reason)")
                        logger.warning("Records left out", metadata: ["user": "\(user)", "reason": "\(reason)"])
                    }
                    first += ExportSnapshot.page
                    if first >= snapshot.transactionsTotal { break }
                } while true
                report.users += 1
            }
        }
        return report
    }

    private func export(_ entry: StreamEntry, since: Int64, into report: inout Report) async throws {
        guard let json = entry.fields["event"] else { return }
        let event: ExportEvent
        do {
            event = try ExportEvent(json: json)
        } catch {
            report.unreadable += 1
            report.skipped.append("entry \(entry.id): \(error.description)")
            logger.warning("Unreadable event left out", metadata: ["entry": "\(entry.id)"])
            return
        }
        guard (UTCTime.milliseconds(iso8601: event.at) ?? .max) >= since else { return }
        do {
            try await writer.write(event, snapshot: nil)
            report.events += 1
        } catch {
            guard let reason = ExportHandler.refusal(error) else { throw error }
            let line = "event \(event.id) (entry \(entry.id)): \(reason)"
            // The same event may be in its partition's stream and in the user's own log: named once.
            if !report.skipped.contains(line) { report.skipped.append(line) }
            logger.warning("Event left out", metadata: ["event": "\(event.id)", "reason": "\(reason)"])
        }
    }
}
