import Pipeline
package import Redis

/// The `tollgate_verifier_v2` Redis Function library (`Lua/verifier.lua`).
///
/// - `verifier_v2_mark_verifying`  KEYS: job status hash  ARGV: attempt, nowMs, retentionSeconds
///   Sets `state=verifying`, `attempt`, `updated.at` unless the job is already final (`fulfilled`,
///   `rejected`, `dead`) or verified (`verified.at` set) — so a late duplicate delivery never moves a
///   status backwards. Returns 1 when it wrote, 0 when it left the status alone.
package enum VerifierFunctions {
    package static let library = RedisFunctionLibrary(
        "verifier", version: 2, functions: ["mark_verifying"],
        parts: [SharedLua.common, SharedLua.jobs, PackageResources.verifier_lua])

    @discardableResult
    static func markVerifying(on redis: any RedisCommandExecutor, key: String, attempt: Int, nowMilliseconds: Int64) async throws -> Bool {
        let reply = try await library.call(
            "mark_verifying", on: redis, keys: [key],
            arguments: [String(attempt), String(nowMilliseconds), String(JobStatus.retentionSeconds)])
        return reply.int == 1
    }
}
