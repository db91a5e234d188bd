import Core
import Pipeline
import Redis

/// Typed calls of the `tollgate_notifier_v1` Redis Function library (`Lua/notifier.lua`, where each function's
/// `KEYS`, `ARGV` and answer are written down). Every call touches one endpoint's keys in one partition
/// (``WebhookKeys``) and that partition's events stream: one slot.
package enum NotifierFunctions {
    package static let library = RedisFunctionLibrary(
        "notifier", version: 1, functions: ["admit", "take", "take_one", "begin", "finish", "retry"],
        parts: [SharedLua.common, PackageResources.notifier_lua])

    /// What ``begin(on:keys:event:token:lease:now:recheck:)`` decided.
    package enum Gate: String, Sendable {
        /// The lease is ours: deliver.
        case go
        /// Delivered or dead-lettered already.
        case done
        /// An earlier seq of the subject is not finished.
        case blocked
        /// Another delivery of the subject is in flight.
        case busy
    }

    /// How an entry ends (``finish(on:keys:group:event:token:outcome:now:reason:)``).
    package enum Outcome: String, Sendable {
        /// A 2xx answered.
        case delivered
        /// The endpoint does not want its type: the cursor moves on without a request.
        case skipped
        /// Past the horizon (or malformed): copied to the dead letters, the cursor moves on.
        case dead
        /// Already finished: only acknowledged.
        case done
    }

    /// Reads up to `count` new entries into the endpoint's schedule: those of `project` (the endpoint's); the others
    /// are acknowledged unsent. Returns how many were read and admitted.
    package static func admit(
        on redis: any RedisCommandExecutor, keys: WebhookKeys, group: String, consumer: String, count: Int, now: Int64,
        project: ProjectID = .default
    ) async throws -> (read: Int, admitted: Int) {
        let reply = try await library.call(
            "admit", on: redis, keys: [keys.stream, keys.due, keys.cursor],
            arguments: [group, consumer, String(count), String(now), project.label ?? ""])
        guard let parts = reply.array, parts.count == 2, let read = parts[0].int, let admitted = parts[1].int else {
            throw RedisError.protocolError("notifier admit returned \(reply)")
        }
        return (Int(read), Int(admitted))
    }

    /// Takes up to `count` entries due at `now`, each reserved for `reserve`; with their failed attempts so far.
    package static func take(
        on redis: any RedisCommandExecutor, keys: WebhookKeys, group: String, now: Int64, count: Int, reserve: Duration
    ) async throws -> [(entry: StreamEntry, attempts: Int)] {
        let reply = try await library.call(
            "take", on: redis, keys: [keys.due, keys.stream, keys.attempts],
            arguments: [group, String(now), String(count), String(reserve.milliseconds)])
        return try items(reply)
    }

    /// `[[id, fields, attempts], …]` as entries.
    private static func items(_ reply: RedisReply) throws -> [(entry: StreamEntry, attempts: Int)] {
        guard let items = reply.array else { throw RedisError.protocolError("notifier take returned \(reply)") }
        return try items.map { item in
            guard let parts = item.array, parts.count == 3, let id = parts[0].string, let flat = parts[1].array,
                flat.count.isMultiple(of: 2), let attempts = parts[2].int
            else { throw RedisError.protocolError("notifier take returned an item \(item)") }
            var fields: [String: [UInt8]] = [:]
            for index in stride(from: 0, to: flat.count, by: 2) {
                guard let name = flat[index].string, let value = flat[index + 1].bytes else {
                    throw RedisError.protocolError("notifier take returned a non-string field in \(id)")
                }
                fields[name] = value
            }
            return (StreamEntry(id: id, fields: fields), Int(attempts))
        }
    }

    /// ``take(on:keys:group:now:count:reserve:)`` of the one entry `id`, when it is due at `now`; else nil.
    package static func takeOne(
        on redis: any RedisCommandExecutor, keys: WebhookKeys, group: String, id: String, now: Int64, reserve: Duration
    ) async throws -> (entry: StreamEntry, attempts: Int)? {
        let reply = try await library.call(
            "take_one", on: redis, keys: [keys.due, keys.stream, keys.attempts],
            arguments: [group, String(now), id, String(reserve.milliseconds)])
        guard case .array = reply else { return nil }
        return try items(.array([reply])).first
    }

    /// Asks to deliver `event` now, leasing its subject for `lease` under `token`.
    package static func begin(
        on redis: any RedisCommandExecutor, keys: WebhookKeys, event: WebhookEvent, token: String, lease: Duration,
        now: Int64, recheck: Duration
    ) async throws -> Gate {
        let reply = try await library.call(
            "begin", on: redis, keys: [keys.cursor, keys.lease(event.subject), keys.due, keys.waiting],
            arguments: [
                event.subject, String(event.seq), token, String(lease.milliseconds), String(now), event.entryID,
                String(recheck.milliseconds),
            ])
        guard let word = reply.array?.first?.string, let gate = Gate(rawValue: word) else {
            throw RedisError.protocolError("notifier begin returned \(reply)")
        }
        return gate
    }

    /// Ends `entryID` (seq `seq` of `subject`; seq 0 for an unreadable entry) with `outcome`. Returns whether this
    /// call acknowledged it, and the entry of the subject's next seq it made due, if one was waiting.
    @discardableResult
    package static func finish(
        on redis: any RedisCommandExecutor, keys: WebhookKeys, group: String, entryID: String, subject: String, seq: Int64,
        token: String, outcome: Outcome, now: Int64, reason: String = ""
    ) async throws -> (acknowledged: Bool, next: String?) {
        let reply = try await library.call(
            "finish", on: redis,
            keys: [keys.cursor, keys.lease(subject), keys.due, keys.attempts, keys.waiting, keys.stream, keys.dead],
            arguments: [group, entryID, subject, String(seq), token, outcome.rawValue, String(now), reason])
        guard let parts = reply.array, parts.count == 2, let acked = parts[0].int else {
            throw RedisError.protocolError("notifier finish returned \(reply)")
        }
        return (acked == 1, parts[1].string)
    }

    /// Records a failed attempt and makes the entry due at `due` (ms). False when another delivery holds the lease.
    @discardableResult
    package static func retry(
        on redis: any RedisCommandExecutor, keys: WebhookKeys, event: WebhookEvent, token: String, due: Int64
    ) async throws -> Bool {
        let reply = try await library.call(
            "retry", on: redis, keys: [keys.lease(event.subject), keys.due, keys.attempts],
            arguments: [event.entryID, token, String(due)])
        guard let done = reply.int else { throw RedisError.protocolError("notifier retry returned \(reply)") }
        return done == 1
    }
}
