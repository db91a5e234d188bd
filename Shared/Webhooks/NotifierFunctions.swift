package import Core
import Pipeline
package import Redis

/// Typed calls of the `tollgate_notifier_v4` Redis Function library (`Lua/notifier.lua`, where each function's
/// `KEYS`, `ARGV` and answer are written down). Every call touches one endpoint's keys in one partition
/// (``WebhookKeys``) and that partition's events stream: one slot.
package enum NotifierFunctions {
    package static let library = RedisFunctionLibrary(
        "notifier", version: 4, functions: ["pull", "finish", "retry", "fleet"],
        parts: [SharedLua.common, PackageResources.notifier_lua])

    /// How an entry ends (``finish(on:keys:group:entryID:subject:seq:token:outcome:now:reason:next:)``).
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

    /// An entry ``pull(on:keys:group:consumer:read:take:now:token:lease:recheck:horizon:project:)`` or ``finish(on:keys:group:entryID:subject:seq:token:outcome:now:reason:next:)`` took, and what
    /// to do with it.
    package struct Taken: Sendable {
        package enum State: String, Sendable {
            /// The subject's lease is ``Taken/token``'s: deliver.
            case go
            /// The entry has no readable `seq`: dead-letter it.
            case unreadable
            /// An earlier seq is missing and the entry is past the horizon: dead-letter it, so later ones go on.
            case expired
        }

        package var entry: StreamEntry
        /// Failed attempts so far.
        package var attempts: Int
        /// The token the lease (``State/go``) is held under, and the one to finish with.
        package var token: String
        package var state: State
    }

    /// What one ``pull(on:keys:group:consumer:read:take:now:token:lease:recheck:horizon:deadMax:project:)`` did.
    package struct Pulled: Sendable {
        /// New entries read, and those of them admitted into the schedule.
        package var read: Int
        package var admitted: Int
        /// The entries to act on.
        package var taken: [Taken]
        /// Entries past the horizon it dead-lettered itself (breaker open or not), and the old dead letters the cap
        /// dropped for them.
        package var expired: Int
        package var dropped: Int
        /// Cursors of subjects with nothing pending it forgot.
        package var forgotten: Int
    }

    /// One step of the loop in one partition: reads up to `read` new entries into the endpoint's schedule (those of
    /// `project`, the endpoint's; the others are acknowledged unsent), dead-letters up to `read` entries written more
    /// than `horizon` ago (whatever the breaker: `take` 0 still does it) and forgets up to `read` cursors of subjects
    /// with nothing pending, then takes up to `take` entries due at `now`, each through the subject's cursor and
    /// lease with the token `<token>/<entry id>` (held for `lease`). Entries already finished are acknowledged, and
    /// ones whose subject is busy or blocked stay scheduled: only those to act on come back. Dead letters are capped
    /// at about `deadMax`.
    package static func pull(
        on redis: any RedisCommandExecutor, keys: WebhookKeys, group: String, consumer: String, read: Int, take: Int,
        now: Int64, token: String, lease: Duration, recheck: Duration, horizon: Duration, deadMax: Int = 10_000,
        project: ProjectID = .default
    ) async throws -> Pulled {
        let reply = try await library.call(
            "pull", on: redis, keys: [keys.stream, keys.due, keys.cursor, keys.attempts, keys.waiting, keys.dead, keys.seen],
            arguments: [
                group, consumer, String(read), String(now), project.label ?? "", String(take), token,
                String(lease.milliseconds), String(recheck.milliseconds), String(horizon.milliseconds), keys.lease(""),
                String(max(1, deadMax)),
            ])
        guard let parts = reply.array, parts.count == 6, let read = parts[0].int, let admitted = parts[1].int,
            let items = parts[2].array, let expired = parts[3].int, let dropped = parts[4].int, let forgotten = parts[5].int
        else { throw RedisError.protocolError("notifier pull returned \(reply)") }
        return Pulled(
            read: Int(read), admitted: Int(admitted), taken: try items.map { try taken($0, state: nil) }, expired: Int(expired),
            dropped: Int(dropped), forgotten: Int(forgotten))
    }

    /// `{id, fields, attempts, token, state}` (state absent: ``Taken/State/go``) as a ``Taken``.
    private static func taken(_ item: RedisReply, state: Taken.State?) throws -> Taken {
        guard let parts = item.array, parts.count >= 4, let id = parts[0].string, let flat = parts[1].array,
            flat.count.isMultiple(of: 2), let attempts = parts[2].int, let token = parts[3].string,
            let state = state ?? parts.dropFirst(4).first?.string.flatMap(Taken.State.init(rawValue:))
        else { throw RedisError.protocolError("notifier returned an item \(item)") }
        var fields: [String: [UInt8]] = [:]
        fields.reserveCapacity(flat.count / 2)
        for index in stride(from: 0, to: flat.count, by: 2) {
            guard let name = flat[index].string, let value = flat[index + 1].bytes else {
                throw RedisError.protocolError("notifier returned a non-string field in \(id)")
            }
            fields[name] = value
        }
        return Taken(entry: StreamEntry(id: id, fields: fields), attempts: Int(attempts), token: token, state: state)
    }

    /// Ends `entryID` (seq `seq` of `subject`; seq 0 for an entry without one) with `outcome`. When the subject's next
    /// seq was waiting on this one, it is due now, and with `next` (a token and a lease) it is taken at once under that
    /// token, as ``pull(on:keys:group:consumer:read:take:now:token:lease:recheck:horizon:project:)`` would: the caller
    /// delivers it next in the same call's answer. A `dead` one goes to the dead letters, capped at about `deadMax`.
    /// Returns whether this call acknowledged the entry, the next seq's entry id when it was made due, the entry
    /// itself when it was taken, and how many old dead letters the cap dropped.
    @discardableResult
    package static func finish(
        on redis: any RedisCommandExecutor, keys: WebhookKeys, group: String, entryID: String, subject: String, seq: Int64,
        token: String, outcome: Outcome, now: Int64, reason: String = "", next: (token: String, lease: Duration)? = nil,
        deadMax: Int = 10_000
    ) async throws -> (acknowledged: Bool, next: String?, taken: Taken?, dropped: Int) {
        let reply = try await library.call(
            "finish", on: redis,
            keys: [keys.cursor, keys.lease(subject), keys.due, keys.attempts, keys.waiting, keys.stream, keys.dead, keys.seen],
            arguments: [
                group, entryID, subject, String(seq), token, outcome.rawValue, String(now), reason, next?.token ?? "",
                String(next?.lease.milliseconds ?? 0), String(max(1, deadMax)),
            ])
        guard let parts = reply.array, parts.count == 3, let acked = parts[0].int, let dropped = parts[2].int else {
            throw RedisError.protocolError("notifier finish returned \(reply)")
        }
        if case .array = parts[1] {
            let taken = try taken(parts[1], state: .go)
            return (acked == 1, taken.entry.id, taken, Int(dropped))
        }
        return (acked == 1, parts[1].string, nil, Int(dropped))
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

    /// Marks `consumer` alive at `now` among the endpoint's replicas (those not seen for `ttl` are forgotten) and, with
    /// `openUntil`, publishes this replica's open breaker when it is open longer than the one published. Returns the
    /// replicas alive and until when the published breaker is open (nil: none is).
    package static func fleet(
        on redis: any RedisCommandExecutor, keys: (replicas: String, breaker: String), consumer: String, now: Int64,
        ttl: Duration, openUntil: Int64? = nil
    ) async throws -> (replicas: Int, openUntil: Int64?) {
        let reply = try await library.call(
            "fleet", on: redis, keys: [keys.replicas, keys.breaker],
            arguments: [consumer, String(now), String(max(1, ttl.milliseconds)), String(openUntil ?? 0)])
        guard let parts = reply.array, parts.count == 2, let replicas = parts[0].int, let until = parts[1].int else {
            throw RedisError.protocolError("notifier fleet returned \(reply)")
        }
        return (max(1, Int(replicas)), until > 0 ? until : nil)
    }
}
