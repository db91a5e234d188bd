import Core
import Foundation
package import Logging
package import Pipeline
import PostgresNIO
package import Redis

/// Exports one events stream entry (docs/EXPORT.md): reads the event, reads what it changed from the ledger
/// (``ExportSnapshot``), writes both into PostgreSQL in one transaction (``ExportWriter``), and only then lets the
/// runtime acknowledge the entry. A crash anywhere before the acknowledgement leaves the entry pending; it is
/// written again, and the writes are idempotent.
///
/// The events streams are shared (the notifier's groups, `GET /v1/events`), so the exporter's consumer runs with
/// ``Pipeline/StreamConsumerConfiguration/sharesStream``: the runtime acknowledges with `XACK` only (`ack_shared`) and
/// a dead letter is a copy. A fault is waited out in the handler, with backoff up to ``maximumBackoff`` and a
/// ``Pipeline/Heartbeat`` keeping the entry from looking abandoned: PostgreSQL or Redis unreachable for any length of
/// time costs no attempt and dead-letters nothing. A statement PostgreSQL itself refuses ``refusalLimit`` times, and an
/// entry that is not a v2 event, are copied to the dead-letter stream (`tg:{pN}:events:dead`) with the reason, never
/// guessed at.
package struct ExportHandler: Sendable {
    let redis: any RedisCommandExecutor
    let keys: Keys
    let writer: ExportBatcher
    let group: String
    let consumer: String
    let metrics: ExportMetrics
    let logger: Logger
    /// The longest wait between two attempts.
    var maximumBackoff: Duration = .seconds(5)
    /// How often the entry's idle time is reset while its write waits: well under the consumers' claim min-idle.
    package var heartbeatInterval: Duration = .seconds(5)
    /// Refusals by PostgreSQL of one entry's writes before it is dead-lettered.
    var refusalLimit = 5

    package init(
        redis: any RedisCommandExecutor, keys: Keys, writer: ExportBatcher, group: String, consumer: String,
        metrics: ExportMetrics, logger: Logger
    ) {
        self.redis = redis
        self.keys = keys
        self.writer = writer
        self.group = group
        self.consumer = consumer
        self.metrics = metrics
        self.logger = logger
    }

    package func handle(_ message: StreamMessage) async -> HandlerOutcome {
        let heartbeat = Heartbeat(
            redis: redis, stream: message.stream, group: group, consumer: consumer, entryID: message.entry.id,
            interval: heartbeatInterval, logger: logger)
        return await heartbeat.run {
            switch await self.outcome(of: message) {
            case .done: return .complete(writes: [])
            case .dead(let reason): return .deadLetter(reason: reason)
            case .abandon: return .abandon
            }
        }
    }

    /// What became of the entry: exported (or nothing to export), dead, or abandoned at shutdown.
    private func outcome(of message: StreamMessage) async -> Outcome {
        // The export database holds one project's rows (``keys``' project, TOLLGATE_EXPORT_PROJECT; docs/PROJECTS.md):
        // another project's entries are not written as if they were its users'.
        guard ProjectID(field: message.entry.string("project")) == keys.project else {
            metrics.skipped()
            return .done
        }
        guard let json = message.entry.fields["event"] else {
            // The ledger's `record` entry: transactions recorded by a call that wrote no event.
            if message.entry.string("kind") == "record", let user = message.entry.string("user"), UserID.isValid(user),
                let side = LedgerSide(label: message.entry.string("side"))
            {
                return await export(records: ExportSnapshot.transactionIds(of: nil, entry: message.entry), of: user, side: side)
            }
            // An entry from before schema v2: nothing to export; the ledger's records are exported by `tollctl export`.
            metrics.skipped()
            return .done
        }
        let event: ExportEvent
        do {
            event = try ExportEvent(json: json)
        } catch {
            metrics.failed()
            logger.warning("Unreadable event; dead-lettering", metadata: ["entry": "\(message.entry.id)", "error": "\(error)"])
            return .dead(error.description)
        }
        return await export(event, transactionIds: ExportSnapshot.transactionIds(of: event, entry: message.entry))
    }

    enum Outcome {
        case done
        case dead(String)
        case abandon
    }

    /// Reads and writes until both succeed, the write is refused ``refusalLimit`` times, or the task is cancelled
    /// (shutdown: the entry stays pending for the next replica).
    func export(_ event: ExportEvent, transactionIds: [String]) async -> Outcome {
        let started = ContinuousClock.now
        let outcome = await persistently(what: event.id) {
            var snapshot: ExportSnapshot?
            if let user = event.userId, UserID.isValid(user) {
                snapshot = try await ExportSnapshot.read(
                    user: user, side: event.side, transactionIds: transactionIds, keys: keys, on: redis)
            }
            try await writer.write(event, snapshot: snapshot)
        }
        if case .done = outcome { metrics.exported(event, after: ContinuousClock.now - started) }
        return outcome
    }

    /// The user's row and the records `transactionIds`, for a `record` entry of `side`.
    func export(records transactionIds: [String], of user: String, side: LedgerSide) async -> Outcome {
        await persistently(what: "records of \(user)") {
            try await writer.write(
                nil,
                snapshot: try await ExportSnapshot.read(
                    user: user, side: side, transactionIds: transactionIds, keys: keys, on: redis))
        }
    }

    /// Runs `body` until it succeeds, PostgreSQL refuses it ``refusalLimit`` times, or the task is cancelled;
    /// every other fault is waited out with backoff.
    private func persistently(what: String, _ body: () async throws -> Void) async -> Outcome {
        var backoff = Duration.milliseconds(100)
        var refusals = 0
        while true {
            do {
                try await watched(what: what, body)
                return .done
            } catch {
                if Task.isCancelled { return .abandon }
                if let reason = Self.refusal(error) {
                    refusals += 1
                    guard refusals < refusalLimit else {
                        metrics.failed()
                        logger.error("Export refused; dead-lettering", metadata: ["export": "\(what)", "reason": "\(reason)"])
                        return .dead(reason)
                    }
                    logger.warning("Export refused; retrying", metadata: ["export": "\(what)", "reason": "\(reason)"])
                } else {
                    metrics.unavailable()
                    logger.warning("Export waiting", metadata: ["export": "\(what)", "error": "\(Self.describe(error))"])
                }
                do {
                    try await Task.sleep(for: .nanoseconds(Int64.random(in: 0...backoff.nanoseconds)) + backoff / 2)
                } catch {
                    return .abandon
                }
                backoff = min(backoff * 2, maximumBackoff)
            }
        }
    }

    /// Runs one attempt of `body`, counting it as waiting — ``ExportMetrics/unavailable()`` and the log line
    /// "Export waiting" — each ``heartbeatInterval`` it is not done. PostgreSQL's client does not fail a write while
    /// the server is unreachable: it holds it until a connection opens, so without this an outage of any length
    /// counted nothing and logged nothing (the `TollgateExportWaiting` alert could not fire).
    private func watched(what: String, _ body: () async throws -> Void) async throws {
        let watch = Task { [metrics, logger, interval = heartbeatInterval] in
            var waited = Duration.zero
            while true {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
                waited += interval
                metrics.unavailable()
                logger.warning(
                    "Export waiting",
                    metadata: [
                        "export": "\(what)", "waited": "\(waited)",
                        "error": "the write is not done: PostgreSQL (or Redis) does not answer",
                    ])
            }
        }
        defer { watch.cancel() }
        try await body()
    }

    /// Whether PostgreSQL's answer says "not now" rather than "not this": a connection problem (class 08), the
    /// server stopping, starting or refusing connections (57: `57P01` admin shutdown, `57P03` cannot connect now), no
    /// resources left (53: too many connections, disk full), a serialization failure or deadlock (40001, 40P01). Those
    /// are waited out like an unreachable server, however long; only other refusals count toward the dead letter.
    package static func isTransient(sqlState: String) -> Bool {
        ["08", "57", "53"].contains(String(sqlState.prefix(2))) || sqlState == "40001" || sqlState == "40P01"
    }

    /// Why PostgreSQL refused a write for what it holds (not for being unreachable, stopping or busy:
    /// ``isTransient(sqlState:)``), or nil when `error` is no such refusal.
    package static func refusal(_ error: any Error) -> String? {
        guard let refused = error as? PSQLError, let server = refused.serverInfo else { return nil }
        let state = server[.sqlState] ?? ""
        guard !isTransient(sqlState: state) else { return nil }
        return "PostgreSQL refused the write: \(state) \(server[.message] ?? "")"
    }

    /// An error for the log: PostgreSQL's errors without the query (its text and binds stay out of logs).
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError { return "PostgreSQL: \(String(describing: error.code))" }
        return "\(error)"
    }
}
