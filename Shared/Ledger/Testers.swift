package import Core
package import Pipeline
package import Redis

/// A project's testers (issue 42): the users whose sandbox side (``LedgerSide``: a production deployment's App Review
/// and TestFlight purchases) counts as production value under `TOLLGATE_SANDBOX_VALUE=testers` — their spends draw it,
/// their entitlements read merges it, and their offer eligibility counts it (docs/ARCHITECTURE.md, invariant 11).
/// The studio's own testers and the demo account it gives App Review; everyone else's sandbox side stays apart.
///
/// Storage, per project (``Keys/projectPrefix``), through the ledger functions `tester_add` and `tester_remove`
/// (`Lua/ledger_testers.lua`):
/// - the mark `tg:{u:<userId>}:tester` (hash: `at` ms, `by`, `until` ms when it ends, `reason`), in the user's slot, so
///   a spend reads it in its own call (``CoinSpend``);
/// - the index `tg:{p0}:testers` of the user's partition (zset: member the user id, score `until` or `+inf`), which
///   ``list(keys:now:on:)`` reads.
///
/// Every change is an event in the user's sequence, written in the same call: `tester.added` (with `until`, `reason`,
/// `by`) and `tester.removed` (docs/EVENTS.md, "Testers"). A mark past its `until` counts for nothing.
package enum Testers {
    /// One user's mark.
    package struct Tester: Sendable, Hashable {
        package var user: String
        /// When it was marked, ms.
        package var at: Int64
        /// Who marked it (a service key's name, or `tollctl`'s `--by`).
        package var by: String
        /// When it ends, ms (nil: no end).
        package var until: Int64?
        package var reason: String?

        package init(user: String, at: Int64, by: String, until: Int64? = nil, reason: String? = nil) {
            (self.user, self.at, self.by, self.until, self.reason) = (user, at, by, until, reason)
        }

        /// Reads the mark's hash; nil when there is none.
        package init?(user: String, hash: [String: String]) {
            guard let at = hash["at"].flatMap({ Int64($0) }), let by = hash["by"] else { return nil }
            self.init(user: user, at: at, by: by, until: hash["until"].flatMap { Int64($0) }, reason: hash["reason"])
        }

        /// Whether the mark is in force at `now` (ms): no `until`, or one still ahead.
        package func isActive(at now: Int64) -> Bool { until.map { $0 > now } ?? true }

        /// The members of the HTTP answers and `tollctl testers list --json`: `userId`, `at`, `by`, `until`, `reason`
        /// (times ISO 8601), `active`.
        package func writeMembers(_ writer: inout JSONWriter, now: Int64) {
            writer.member("userId", user)
            writer.member("at", EntitlementsView.iso8601(at))
            writer.member("by", by)
            writer.member("until", until.map(EntitlementsView.iso8601))
            writer.member("reason", reason)
            writer.member("active", isActive(at: now))
        }
    }

    /// What a change did.
    package enum Change: Sendable, Hashable {
        /// Written, with its event's `seq` and `id`.
        case changed(seq: Int64, eventId: String)
        /// `add` of the very mark in force already: nothing written.
        case unchanged
        /// `remove` of a user with no mark: nothing written.
        case notFound
    }

    /// The longest a reason may be, in bytes.
    package static let maxReasonBytes = 200

    /// The function's keys for one user, all in the user's slot (docs/CLUSTER.md).
    static func functionKeys(user: String, keys: Keys) -> [String] {
        let partition = keys.partition(ofUser: user)
        let primary = keys.on(.primary)
        return [
            primary.tester(user: user), primary.testers(partition: partition), primary.events(partition: partition).stream,
            primary.account(user: user), primary.userEvents(user: user),
        ]
    }

    private static func request(
        user: String, by: String, now: Int64, until: Int64? = nil, reason: String? = nil, keys: Keys, log: UserEventLog
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.member("user", user)
        writer.member("now", now)
        writer.member("by", by)
        writer.member("until", until)
        writer.member("reason", reason)
        // Outside the default project its events carry `project` and count in `<project>/<user>` (docs/PROJECTS.md).
        if let project = keys.project.label { writer.member("project", project) }
        writer.member("ulogCap", log.cap)
        writer.member("ulogTtl", log.retentionSeconds)
        writer.endObject()
        return writer.bytes
    }

    private static func change(_ reply: RedisReply, _ function: String) throws -> Change {
        guard let bytes = reply.bytes, let value = try? JSONReader.parse(bytes), let fields = try? JSONFields(value),
            let outcome = try? fields.string("outcome")
        else { throw LedgerError.unexpectedReply("\(function) returned \(reply)") }
        switch outcome {
        case "unchanged": return .unchanged
        case "not_found": return .notFound
        default:
            guard let seq = (try? fields.string("seq")).flatMap({ Int64($0) }), let id = try? fields.string("id") else {
                throw LedgerError.unexpectedReply("\(function) returned \(String(decoding: bytes, as: UTF8.self))")
            }
            return .changed(seq: seq, eventId: id)
        }
    }

    /// Marks `user` a tester of ``Keys/project`` until `until` (ms, after `now`; nil: no end) and writes `tester.added`.
    package static func add(
        user: String, until: Int64?, reason: String?, by: String, now: Int64, keys: Keys,
        userEventLog: UserEventLog = UserEventLog(), on redis: any RedisCommandExecutor
    ) async throws -> Change {
        guard UserID.isValid(user) else { throw LedgerError.unexpectedReply("the user id is not valid") }
        let body = request(user: user, by: by, now: now, until: until, reason: reason, keys: keys, log: userEventLog)
        let reply = try await LedgerFunctions.library.call(
            "tester_add", on: redis, keys: functionKeys(user: user, keys: keys), arguments: [body])
        return try change(reply, "tester_add")
    }

    /// Removes `user`'s mark and writes `tester.removed` (``Change/notFound`` when there is none).
    package static func remove(
        user: String, by: String, now: Int64, keys: Keys, userEventLog: UserEventLog = UserEventLog(),
        on redis: any RedisCommandExecutor
    ) async throws -> Change {
        guard UserID.isValid(user) else { throw LedgerError.unexpectedReply("the user id is not valid") }
        let body = request(user: user, by: by, now: now, keys: keys, log: userEventLog)
        let reply = try await LedgerFunctions.library.call(
            "tester_remove", on: redis, keys: functionKeys(user: user, keys: keys), arguments: [body])
        return try change(reply, "tester_remove")
    }

    /// `user`'s mark (in force or not), or nil.
    package static func mark(user: String, keys: Keys, on redis: any RedisCommandExecutor) async throws -> Tester? {
        let reply = try await redis.send(RedisCommand("HGETALL", key: keys.on(.primary).tester(user: user)))
        return Tester(user: user, hash: reply.fieldValues)
    }

    /// Whether `user` is a tester at `now`.
    package static func isTester(user: String, now: Int64, keys: Keys, on redis: any RedisCommandExecutor) async throws -> Bool {
        try await mark(user: user, keys: keys, on: redis)?.isActive(at: now) ?? false
    }

    /// Every marked user of ``Keys/project`` (those past their `until` too, which count for nothing), by user id.
    package static func list(keys: Keys, on redis: any RedisCommandExecutor) async throws -> [Tester] {
        var testers: [Tester] = []
        for partition in keys.partitions {
            let members = try await redis.send(
                RedisCommand("ZRANGE", key: keys.on(.primary).testers(partition: partition), 0, -1))
            for user in (members.array ?? []).compactMap(\.string) where UserID.isValid(user) {
                if let tester = try await mark(user: user, keys: keys, on: redis) { testers.append(tester) }
            }
        }
        return testers.sorted { $0.user < $1.user }
    }
}

/// Where the sandbox side counts as production value (`TOLLGATE_SANDBOX_VALUE`, ingest; docs/OPERATIONS.md).
package enum SandboxValue: String, Sendable, Hashable, CaseIterable {
    /// Only for testers (``Testers``), and for a spend whose request says `allowSandbox: true` (the default).
    case testers
    /// For everyone, as before issue 42: every spend draws the sandbox side, every entitlements read merges it, every
    /// offer eligibility counts it.
    case everyone
}
