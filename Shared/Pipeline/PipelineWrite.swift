/// One write applied atomically together with the acknowledgement of an entry, and only if the entry was
/// still pending (the `XACK` gate). Keys must share the consumed stream's hash tag (Redis Cluster).
package enum PipelineWrite: Sendable {
    /// `XADD <stream> * field value …` — hands a job to the next stage. Needs at least one field.
    case xadd(stream: String, fields: [(String, [UInt8])])
    /// `HSET <key> field value …`, then `EXPIRE <key> <expireSeconds>` when given — e.g. a job status.
    case hset(key: String, fields: [(String, [UInt8])], expireSeconds: Int? = nil)
    /// A job's status through `Lua/jobs.lua`'s one writer (`write_status`): `HSET` of `fields` (``JobStatus/Field``
    /// names only), `HDEL` of `clear`, `EXPIRE` after `expireSeconds`, and when the hash's state is then final one
    /// `PUBLISH` on `channel` of `<job id>\n<the hash as JSON>` (what `?wait=` answers from).
    case status(key: String, jobID: String, fields: [(String, String)], clear: [String], expireSeconds: Int, channel: String)
    /// `PUBLISH <channel> <message>` — wakes up waiters (e.g. `?wait=`).
    case publish(channel: String, message: [UInt8])
    /// `HINCRBY <key> <field> <delta>` — e.g. a source's backlog counters.
    case hincrby(key: String, field: String, delta: Int64)
    /// `EXPIRE <key> <seconds> LT` — shortens a key's life (never lengthens it; nothing on a missing key).
    case shortenExpiry(key: String, seconds: Int)

    /// `XADD` with string values.
    package static func xadd(stream: String, strings: [(String, String)]) -> PipelineWrite {
        .xadd(stream: stream, fields: strings.map { ($0.0, Array($0.1.utf8)) })
    }

    /// `HSET` with string values.
    package static func hset(key: String, strings: [(String, String)], expireSeconds: Int? = nil) -> PipelineWrite {
        .hset(key: key, fields: strings.map { ($0.0, Array($0.1.utf8)) }, expireSeconds: expireSeconds)
    }

    /// `PUBLISH` with a string message.
    package static func publish(channel: String, string: String) -> PipelineWrite {
        .publish(channel: channel, message: Array(string.utf8))
    }
}
