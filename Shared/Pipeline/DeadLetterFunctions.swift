package import Redis

/// The `tollgate_deadletter_v2` Redis Function library (`Lua/deadletter.lua`), used by `tollctl dead redrive`.
///
/// - `deadletter_v2_redrive`  KEYS: dead-letter stream, its source stream, job status hash, backlog hash
///   ARGV: dead entry id, job id, nowMs, retentionSeconds
///   Copies the dead entry's original fields (without `source.*`, `reason`, `attempts`, `dead.at` and the
///   runtime's `pipeline.*`, so attempts start again at 1) onto the source stream, deletes the dead entry
///   and sets the job's status back to `queued` (clearing `reason`, `message`, `attempt`, `next.at`) — in
///   one atomic step. A job counted in its source's backlog (`job.bytes`) is counted again, since its dead
///   letter took it off. Returns the new entry id, or nil when the dead entry is gone (redriven already).
package enum DeadLetterFunctions {
    package static let library = RedisFunctionLibrary(
        "deadletter", version: 2, functions: ["redrive"], parts: [SharedLua.common, SharedLua.jobs, PackageResources.deadletter_lua])

    /// Redrives one dead entry of `keys`; returns the new jobs-stream id, or nil when it was gone.
    package static func redrive(
        on redis: any RedisCommandExecutor, keys: StreamKeys, statusKey: String, backlogKey: String, deadID: String,
        jobID: String, nowMilliseconds: Int64
    ) async throws -> String? {
        let reply = try await library.call(
            "redrive", on: redis, keys: [keys.deadLetter, keys.stream, statusKey, backlogKey],
            arguments: [deadID, jobID, String(nowMilliseconds), String(JobStatus.retentionSeconds)])
        return reply.isNull ? nil : reply.string
    }
}
