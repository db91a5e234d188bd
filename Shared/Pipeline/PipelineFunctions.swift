package import Redis

/// Typed calls of the `tollgate_pipeline_v4` Redis Function library (`Lua/pipeline.lua`). Every ack function
/// acknowledges through `Lua/jobs.lua`'s one gate (`acknowledge`: `XACK` returning 1, so a redelivered or late
/// completion changes nothing, then `XDEL`: each stream has one consumer group, and a finished job's payload must
/// not wait for the janitor), and writes a job's status through its one writer (`write_status`, the `STATUS`
/// write); every key a function touches is passed in `KEYS`. (3: the `STATUS` write; 4: `ack_shared`, the
/// acknowledgement of a stream several groups read, XACK only.)
///
/// The raw contract, for callers in other languages (`writes` is described in the Lua source):
/// - `pipeline_v4_ack_write`  KEYS: stream, write keys…  ARGV: group, id, writes…  → 1 applied / 0 already acked
/// - `pipeline_v4_ack_retry`  KEYS: stream, retry zset, write keys…
///   ARGV: group, id, dueMs, nextAttempt, error, writes…  → 1 / 0
/// - `pipeline_v4_ack_dead_letter`  KEYS: stream, dead stream, write keys…
///   ARGV: group, id, reason, attempts, deadAtMs, writes…  → 1 / 0
/// - `pipeline_v4_ack_shared`  KEYS: stream, dead stream  ARGV: group, id, reason ('' none), attempts, deadAtMs
///   → 1 / 0 (XACK only; with a reason, the entry copied to the dead stream)
/// - `pipeline_v4_promote`  KEYS: retry zset, stream  ARGV: nowMs, limit  → number moved
/// - `pipeline_v4_prune_consumer`  KEYS: stream  ARGV: group, consumer, idle limit (ms)  → 1 deleted / 0
package enum PipelineFunctions {
    /// The library; a later contract gets a new version.
    package static let library = RedisFunctionLibrary(
        "pipeline", version: 4,
        functions: ["ack_write", "ack_retry", "ack_dead_letter", "ack_shared", "promote", "prune_consumer"],
        parts: [SharedLua.common, SharedLua.jobs, PackageResources.pipeline_lua])

    /// The entry field carrying the attempt number of a retried entry (absent on the first attempt).
    package static let attemptField = "pipeline.attempt"
    /// The entry field carrying the last error of a retried entry.
    package static let errorField = "pipeline.error"

    /// Acknowledges `id` in `group` and, only if it was still pending, applies `writes`.
    /// Returns whether it was applied (false: someone already acknowledged it).
    package static func ackWrite(
        on redis: any RedisCommandExecutor, stream: String, group: String, id: String, writes: [PipelineWrite]
    ) async throws -> Bool {
        var call = FunctionCall(keys: [stream], arguments: [group, id])
        call.append(writes)
        return try await call.run("ack_write", on: redis)
    }

    /// Acknowledges `id` and, only if it was still pending, stores its fields with `nextAttempt` and `error`
    /// in the retry ZSET scored by `dueMilliseconds`, and applies `writes`.
    package static func ackRetry(
        on redis: any RedisCommandExecutor, stream: StreamKeys, group: String, id: String,
        dueMilliseconds: Int64, nextAttempt: Int, error: String, writes: [PipelineWrite] = []
    ) async throws -> Bool {
        var call = FunctionCall(
            keys: [stream.stream, stream.retry],
            arguments: [group, id, String(dueMilliseconds), String(nextAttempt), error]
        )
        call.append(writes)
        return try await call.run("ack_retry", on: redis)
    }

    /// Acknowledges `id` and, only if it was still pending, copies it to the dead-letter stream with
    /// `source.stream`, `source.id`, `reason`, `attempts` and `dead.at` (ms), and applies `writes`.
    package static func ackDeadLetter(
        on redis: any RedisCommandExecutor, stream: StreamKeys, group: String, id: String,
        reason: String, attempts: Int, deadAtMilliseconds: Int64, writes: [PipelineWrite] = []
    ) async throws -> Bool {
        var call = FunctionCall(
            keys: [stream.stream, stream.deadLetter],
            arguments: [group, id, reason, String(attempts), String(deadAtMilliseconds)]
        )
        call.append(writes)
        return try await call.run("ack_dead_letter", on: redis)
    }

    /// Acknowledges `id` of a stream several groups read (``StreamConsumerConfiguration/sharesStream``): `XACK` only,
    /// never deleting it; with `deadLetterReason`, the call that acknowledges also copies it to the dead-letter stream
    /// with `source.stream`, `source.id`, `reason`, `attempts` and `dead.at`. Returns whether this call acknowledged it.
    package static func ackShared(
        on redis: any RedisCommandExecutor, stream: StreamKeys, group: String, id: String, deadLetterReason: String?,
        attempts: Int, deadAtMilliseconds: Int64
    ) async throws -> Bool {
        let call = FunctionCall(
            keys: [stream.stream, stream.deadLetter],
            arguments: [group, id, deadLetterReason ?? "", String(attempts), String(deadAtMilliseconds)])
        return try await call.run("ack_shared", on: redis)
    }

    /// Deletes `consumer` from `group` when it holds nothing and has been idle for `idleLimit`, atomically;
    /// true when it was deleted.
    package static func pruneConsumer(
        on redis: any RedisCommandExecutor, stream: String, group: String, consumer: String, idleLimit: Duration
    ) async throws -> Bool {
        let reply = try await library.call(
            "prune_consumer", on: redis, keys: [stream], arguments: [group, consumer, String(idleLimit.milliseconds)])
        guard let deleted = reply.int else { throw PipelineError.unexpectedReply("prune_consumer returned \(reply)") }
        return deleted == 1
    }

    /// Moves up to `limit` retries due at or before `nowMilliseconds` back onto the stream; returns how many.
    package static func promote(
        on redis: any RedisCommandExecutor, stream: StreamKeys, nowMilliseconds: Int64, limit: Int
    ) async throws -> Int {
        let reply = try await library.call(
            "promote", on: redis, keys: [stream.retry, stream.stream],
            arguments: [String(nowMilliseconds), String(limit)]
        )
        guard let count = reply.int else { throw PipelineError.unexpectedReply("promote returned \(reply)") }
        return Int(count)
    }
}
