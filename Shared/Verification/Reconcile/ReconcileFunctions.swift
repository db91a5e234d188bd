import Pipeline
package import Redis

/// The `tollgate_reconcile_v2` Redis Function library (`Lua/reconcile.lua`): the reconciler's leader lease, its fenced cursor
/// writes, and the two ways it hands work to the pipeline. Every key of one call shares one slot: the control slot
/// `{p0}` for `acquire`, `release` and `write` (lease, cursors, status); the partition J the job starts in for
/// `enqueue` (jobs stream, job hash, seen marker: J = the notification's partition) and for `emit` (verified stream
/// and job hash: J = the partition of the event's user, where the fulfiller applies it without a forward).
///
/// - `reconcile_v2_acquire` KEYS: lease  ARGV: token, ttlMs → 1 when the lease is (now) held by `token`
///   (taken with `SET NX PX`, or renewed with `PEXPIRE` when `token` already holds it), else 0.
/// - `reconcile_v2_release` KEYS: lease  ARGV: token → 1 when `token` held it and it was deleted.
/// - `reconcile_v2_write` KEYS: lease, hash  ARGV: token, n, (field value)×n, m, field×m → 1 after
///   `HSET`ting the pairs and `HDEL`ing the fields, only while `token` holds the lease (a leader whose lease
///   ran out can never move the checkpoint); else 0.
/// - `reconcile_v2_enqueue` KEYS: jobs stream, job status hash, seen key  ARGV: jobId, seenTTLSeconds,
///   statusTTLSeconds, n, (field value)×n of the job, m, (field value)×m of the `queued` status →
///   `[jobId, 1]` after `SET seen jobId NX EX`, `XADD` and `HSET`; `[earlier jobId, 0]` when the seen key
///   existed (nothing written) — running twice, or two leaders one after the other, enqueue once.
/// - `reconcile_v2_emit` KEYS: verified stream, job status hash  ARGV: statusTTLSeconds, n, (field
///   value)×n of the verified entry, m, (field value)×m of the status → 1 after `XADD` and `HSET`: a
///   sweeper answer, verified in the verifier, handed to the fulfiller like any verified job.
package enum ReconcileFunctions {
    package static let library = RedisFunctionLibrary(
        "reconcile", version: 2, functions: ["acquire", "release", "write", "enqueue", "emit"],
        parts: [SharedLua.common, SharedLua.jobs, PackageResources.reconcile_lua])

    static func acquire(on redis: any RedisCommandExecutor, lease: String, token: String, ttl: Duration) async throws -> Bool {
        try await library.call("acquire", on: redis, keys: [lease], arguments: [token, ttl.milliseconds]).int == 1
    }

    @discardableResult
    static func release(on redis: any RedisCommandExecutor, lease: String, token: String) async throws -> Bool {
        try await library.call("release", on: redis, keys: [lease], arguments: [token]).int == 1
    }

    /// Sets `fields` and deletes `removing` in `hash` while `token` holds `lease`; false when it does not.
    static func write(
        on redis: any RedisCommandExecutor, lease: String, token: String, hash: String,
        fields: [(String, String)], removing: [String] = []
    ) async throws -> Bool {
        var arguments: [any RedisArgumentConvertible] = [token, fields.count]
        for (name, value) in fields { arguments += [name, value] }
        arguments.append(removing.count)
        arguments += removing
        return try await library.call("write", on: redis, keys: [lease, hash], arguments: arguments).int == 1
    }

    /// Enqueues `job` into `partition` (its id must name it, ``Keys/newJobID(partition:)``) unless `seenKey` (in
    /// that partition too) says it already was; returns the job id that carries it and whether this call created it.
    static func enqueue(
        on redis: any RedisCommandExecutor, keys: Keys, job: Job, partition: Partition, seenKey: String, seenTTLSeconds: Int
    ) async throws -> (jobID: String, created: Bool) {
        let status = JobStatus(jobID: job.id, state: .queued, kind: job.kind, updatedAtMilliseconds: job.receivedAtMilliseconds)
        var arguments: [[UInt8]] = [Array(job.id.utf8), Array(String(seenTTLSeconds).utf8), Array(String(JobStatus.retentionSeconds).utf8)]
        arguments += flatten(job.fields)
        arguments += flatten(status.fields.map { ($0.0, Array($0.1.utf8)) })
        let reply = try await library.call(
            "enqueue", on: redis, keys: [keys.jobs(partition: partition).stream, keys.job(job.id, partition: partition), seenKey],
            arguments: arguments)
        guard let parts = reply.array, parts.count == 2, let id = parts[0].string, let created = parts[1].int else {
            throw PipelineError.unexpectedReply("\(library.function("enqueue")) returned \(reply)")
        }
        return (id, created == 1)
    }

    /// Hands a verified event to the fulfiller with its job status (`verifying`, `verified.at`), on the verified
    /// stream of `partition` with the job hash there: the partition of the user the event is for (Pu), where the
    /// fulfiller applies it without a forward. The event's job id must name that partition
    /// (``Keys/newJobID(partition:)``). The event is placed on the ledger side its environment belongs to in a
    /// deployment whose own environment is production (`deploymentIsProduction`) or sandbox (``LedgerSide``).
    static func emit(
        on redis: any RedisCommandExecutor, keys: Keys, event: PurchaseEvent, deploymentIsProduction: Bool, partition: Partition,
        nowMilliseconds: Int64
    ) async throws {
        var event = event
        event.placeSide(deploymentIsProduction: deploymentIsProduction)
        var status = JobStatus(
            jobID: event.jobId, state: .verifying, kind: event.kind, userID: event.userId, source: event.source.rawValue,
            updatedAtMilliseconds: nowMilliseconds, verifiedAtMilliseconds: nowMilliseconds)
        // The event's project: only its keys read the job (docs/PROJECTS.md).
        status.project = event.project
        var arguments: [[UInt8]] = [Array(String(JobStatus.retentionSeconds).utf8)]
        arguments += flatten(try event.streamFields())
        arguments += flatten(status.fields.map { ($0.0, Array($0.1.utf8)) })
        _ = try await library.call(
            "emit", on: redis, keys: [keys.verified(partition: partition).stream, keys.job(event.jobId, partition: partition)],
            arguments: arguments)
    }

    private static func flatten(_ fields: [(String, [UInt8])]) -> [[UInt8]] {
        var out: [[UInt8]] = [Array(String(fields.count).utf8)]
        for (name, value) in fields {
            out.append(Array(name.utf8))
            out.append(value)
        }
        return out
    }
}
