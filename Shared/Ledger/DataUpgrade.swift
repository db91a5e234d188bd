package import Core
package import Pipeline
package import Redis

/// `tollctl upgrade`: brings the data in Redis from the version it was written with to this build's
/// (``Pipeline/StoredData/version``), then records that version in the layout record, where every service checks it
/// at start (``Pipeline/Keys/checkLayout(on:)``). docs/UPGRADING.md has the operator's steps.
///
/// Run with the services stopped (an older build's fulfiller would go on writing records the steps below do not see).
/// Each step can be run again, and the version is recorded only after the last one: a run interrupted anywhere is
/// finished by running it again, and a run on current data changes nothing. It works on any layout and on a Redis
/// Cluster: the steps find keys with `SCAN` on every primary and send each command to its key's slot.
///
/// The steps, by the version they reach:
/// - 1 (0.9.0): the transaction owner index (`tg:{pN}:txo:<tid>`, ledger v7) for every record written before it, in
///   every project given (``TransactionOwnerIndex``, `SET NX`). The other stored-data changes since 0.8 need no step:
///   new fields are read with a default when absent (`coins.granted`, the renewal's `aprod`/`intent`/`winback`, the
///   records' revenue facts) and new keys are written when first needed (grants, spends, the sandbox side).
package struct DataUpgrade: Sendable {
    package struct Report: Sendable, Hashable {
        /// The version found (0: data written before the marker existed).
        package var from: Int
        /// The version recorded.
        package var to: Int
        /// Nothing was stored yet: the current version was recorded, as a service records it.
        package var empty = false
        /// One line per step run: what it did.
        package var steps: [String] = []
        /// The data was current already: nothing was written.
        package var alreadyCurrent: Bool { from == to && !empty }
    }

    let redis: any RedisCommandExecutor
    let keys: Keys
    let projects: [ProjectID]

    /// - Parameters:
    ///   - keys: the deployment's keys (prefix and partitions, `TOLLGATE_PARTITIONS`).
    ///   - projects: the projects whose ledgers to upgrade (`default` and those `TOLLGATE_APPS` lists).
    package init(redis: any RedisCommandExecutor, keys: Keys, projects: [ProjectID]) {
        self.redis = redis
        self.keys = keys
        self.projects = projects.contains(.default) ? projects : [.default] + projects
    }

    package func run() async throws -> Report {
        let record = try await redis.hgetall(keys.layoutRecord)
        if let migrating = record["migrating"].flatMap({ Int($0) }) { throw PipelineError.layoutMigrating(partitions: migrating) }
        let stored = record[StoredData.field].flatMap { Int($0) }
        var recorded = record["partitions"].flatMap { Int($0) }
        var unrecorded = false
        if recorded == nil { unrecorded = try await keys.holdsUnrecordedData(on: redis) }
        if recorded == nil, stored == nil, !unrecorded {
            // Nothing stored: record the layout and the current version, as the first service to start would.
            try await keys.checkLayout(on: redis)
            return Report(from: StoredData.version, to: StoredData.version, empty: true)
        }
        if recorded == nil, unrecorded { recorded = 1 }  // layout 1, written before the layout record
        guard let recorded, recorded == keys.layout.count else {
            throw PipelineError.layoutMismatch(configured: keys.layout.count, recorded: recorded ?? 0)
        }
        let from = stored ?? 0
        guard from <= StoredData.version else { throw PipelineError.dataTooNew(stored: from, current: StoredData.version) }
        var report = Report(from: from, to: StoredData.version)
        guard from < StoredData.version else { return report }
        for version in (from + 1)...StoredData.version {
            report.steps += try await step(to: version)
        }
        // The layout as the services record it (a layout-1 deployment from before the record has none), then the
        // version, last: its presence says every step is done.
        _ = try await redis.send(RedisCommand("HSETNX", key: keys.layoutRecord, "partitions", keys.layout.count))
        _ = try await redis.send(RedisCommand("HSETNX", key: keys.layoutRecord, "version", keys.layout.version))
        _ = try await redis.send(RedisCommand("HSET", key: keys.layoutRecord, StoredData.field, StoredData.version))
        return report
    }

    /// The step that raises the data to `version`; a line for each thing it did.
    private func step(to version: Int) async throws -> [String] {
        switch version {
        case 1:
            var lines: [String] = []
            for project in projects {
                let index = try await TransactionOwnerIndex.backfill(on: redis, keys: keys.inProject(project), dryRun: false)
                lines.append(
                    "1: transaction owner index, project \(project): users=\(index.users) transactions=\(index.transactions) "
                        + "written=\(index.written)")
            }
            return lines
        default:
            return []
        }
    }
}
