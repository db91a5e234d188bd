import Core

/// What can go wrong in the pipeline module at run time, with a stable machine `code` and a human message.
/// (A malformed setting is a ``Core/ConfigurationError``.)
///
/// Startup errors name the environment variable to fix, so that an operator reading
/// `ingest: error: redis_unavailable: TOLLGATE_REDIS_URL …` knows where to look.
package enum PipelineError: TollgateError, Sendable, Hashable {
    /// Redis could not be reached or refused the connection at startup.
    case redisUnavailable(variable: String, message: String)
    /// `FUNCTION LOAD` of a function library failed.
    case functionLoadFailed(String)
    /// Redis answered with something the pipeline did not expect.
    case unexpectedReply(String)
    /// A stream entry lacks a field or has one that cannot be read; `id` is the entry id.
    case malformedEntry(id: String, message: String)
    /// `TOLLGATE_PARTITIONS` outside 1…``PartitionLayout/maximum``.
    case invalidPartitionCount(Int)
    /// The partitions recorded in Redis (`tg:{p0}:layout`) are not the ones configured.
    case layoutMismatch(configured: Int, recorded: Int)
    /// `tollctl layout repartition` started moving the data to `partitions` and has not finished.
    case layoutMigrating(partitions: Int)
    /// A repartition cannot start: work is unfinished, or Redis is not the single primary it moves.
    case repartitionRefused(String)
    /// Redis holds data of an older version than this build's (``StoredData/version``): `tollctl upgrade` first.
    case dataUpgradeRequired(stored: Int, current: Int)
    /// Redis holds data of a newer version than this build knows (``StoredData/version``): a newer release wrote it.
    case dataTooNew(stored: Int, current: Int)

    /// A stable machine-readable code.
    package var code: String {
        switch self {
        case .redisUnavailable: "redis_unavailable"
        case .functionLoadFailed: "function_load_failed"
        case .unexpectedReply: "unexpected_reply"
        case .malformedEntry: "malformed_entry"
        case .invalidPartitionCount: "invalid_partition_count"
        case .layoutMismatch: "layout_mismatch"
        case .layoutMigrating: "layout_migrating"
        case .repartitionRefused: "repartition_refused"
        case .dataUpgradeRequired: "data_upgrade_required"
        case .dataTooNew: "data_too_new"
        }
    }

    /// The human message, naming the variable where there is one.
    package var message: String {
        switch self {
        case .redisUnavailable(let variable, let message): "\(variable): \(message)"
        case .functionLoadFailed(let message): "cannot load the Redis functions: \(message)"
        case .unexpectedReply(let message): "unexpected Redis reply: \(message)"
        case .malformedEntry(let id, let message): "stream entry \(id) is malformed: \(message)"
        case .invalidPartitionCount(let count): "TOLLGATE_PARTITIONS: \(count) is not in 1...\(PartitionLayout.maximum)"
        case .layoutMismatch(let configured, let recorded):
            "TOLLGATE_PARTITIONS: \(configured) configured but Redis holds data laid out in \(recorded) (tg:{p0}:layout); "
                + "start with TOLLGATE_PARTITIONS=\(recorded), or repartition first (tollctl layout repartition)"
        case .layoutMigrating(let partitions):
            "tollctl layout repartition --partitions \(partitions) has not finished (tg:{p0}:layout migrating); run it again "
                + "to finish before starting the services"
        case .repartitionRefused(let message): "cannot repartition: \(message)"
        case .dataUpgradeRequired(let stored, let current):
            "stored data is version \(stored)\(StoredData.release(after: stored).map { " (written before \($0))" } ?? ""), this build "
                + "uses version \(current); stop the services, back up Redis, run `tollctl upgrade` (docs/UPGRADING.md)"
        case .dataTooNew(let stored, let current):
            "stored data is version \(stored), newer than this build's \(current): a newer release wrote it; use that release's "
                + "tollctl (docs/UPGRADING.md)"
        }
    }
}
