package import Core
import Foundation
package import Pipeline
package import Redis

/// Labelled grants (issue 31, item 5): an entitlement until a time, or coins, that an app's backend gives a user with
/// a reason, through the ledger's functions `grant`, `revoke` and `expire_grant` (`Lua/ledger_grants.lua`).
///
/// A grant never touches Apple's records: no transaction record, entitlement hash, `ent:` field of the account,
/// binding, order or refund. Its entitlement is merged with Apple's when read (``EntitlementsView``), so a refund
/// never revokes it. A coin grant adds to the balance and to the account's `coins.granted` (granted coins still
/// unspent), which a debit that takes the balance below it lowers to the balance; revoking a coin grant takes back
/// `min(coins, coins.granted)` from both, never below zero (coins already spent are not taken again). The ledger
/// meta's `grants.coins` is what grants added to the balance net of revocations: ``LedgerAudit`` allows it.
///
/// Storage: the user's grants hash (``Keys/grants(user:)``) and the partition's due index (``Keys/grantsDue(partition:)``);
/// every grant, revocation and expiry writes its event in the same call (docs/EVENTS.md, "Grants").
package enum LedgerGrants {
    /// One stored grant: the grants hash's value, `{"grantId", "entitlement" | "coins", "until", "reason", "by", "at"}`.
    package struct Grant: Sendable, Hashable {
        package var grantId: String
        package var entitlement: String?
        package var coins: Int64?
        /// When the grant ends, ms since 1970 (entitlement grants; coin grants do not end).
        package var until: Int64?
        package var reason: String
        /// The name of the service key that granted it.
        package var by: String
        /// When it was granted, ms.
        package var at: Int64

        package init(
            grantId: String, entitlement: String? = nil, coins: Int64? = nil, until: Int64? = nil, reason: String, by: String,
            at: Int64
        ) {
            (self.grantId, self.entitlement, self.coins, self.until) = (grantId, entitlement, coins, until)
            (self.reason, self.by, self.at) = (reason, by, at)
        }

        /// Reads a stored value; nil when it is not one.
        package init?(json: [UInt8]) {
            guard let value = try? JSONReader.parse(json), let fields = try? JSONFields(value) else { return nil }
            self.init(fields: fields)
        }

        /// Reads a stored value's members; nil when they are not a grant's.
        package init?(fields: JSONFields) {
            do {
                self.init(
                    grantId: try fields.string("grantId"), entitlement: try fields.optionalString("entitlement"),
                    coins: try fields.optionalInt64("coins"), until: try fields.optionalInt64("until"),
                    reason: try fields.string("reason"), by: try fields.string("by"), at: try fields.int64("at"))
            } catch {
                return nil
            }
            guard (entitlement == nil) != (coins == nil) else { return nil }
        }

        /// Whether it grants at `now`: a coin grant always, an entitlement grant until its `until`.
        package func isActive(at now: Int64) -> Bool { until.map { $0 > now } ?? true }

        /// The members of the HTTP answers and `tollctl grants --json`: `grantId`, `entitlement` or `coins`,
        /// `until` (ISO 8601), `reason`, `by`, `at` (ISO 8601).
        package func writeMembers(_ writer: inout JSONWriter) {
            writer.member("grantId", grantId)
            writer.member("entitlement", entitlement)
            writer.member("coins", coins)
            writer.member("until", until.map(EntitlementsView.iso8601))
            writer.member("reason", reason)
            writer.member("by", by)
            writer.member("at", EntitlementsView.iso8601(at))
        }
    }

    /// A new grant.
    package struct Request: Sendable, Hashable {
        package var user: String
        package var grantId: String
        package var entitlement: String?
        package var coins: Int64?
        package var until: Int64?
        package var reason: String
        package var by: String
        package var now: Int64
        /// The caller's key for a retried request: a second request with it and the same body writes nothing and
        /// answers the first grant with its state now; one with another body is ``IdempotencyConflict``.
        package var idempotencyKey: String?

        package init(
            user: String, grantId: String = LedgerGrants.newGrantId(), entitlement: String? = nil, coins: Int64? = nil,
            until: Int64? = nil, reason: String, by: String, now: Int64, idempotencyKey: String? = nil
        ) {
            (self.user, self.grantId, self.entitlement, self.coins, self.until) = (user, grantId, entitlement, coins, until)
            (self.reason, self.by, self.now, self.idempotencyKey) = (reason, by, now, idempotencyKey)
        }
    }

    /// Where a grant stands: the `state` of the HTTP answers (issue 42, item 9).
    package enum State: String, Sendable, Hashable {
        /// Held, and its `until` (if any) ahead.
        case active
        /// Revoked (`DELETE …/grants/{grantId}`).
        case revoked
        /// Its `until` has passed, whether or not the sweeper has removed it yet.
        case expired
    }

    /// What `grant` did.
    package struct Created: Sendable, Hashable {
        package var grant: Grant
        /// False when an earlier request with the same idempotency key and body granted it (nothing was written now).
        package var isNew: Bool
        /// The balance after it (nil for a replay).
        package var balance: Int64?
        /// The grant's state now: `active` for a new grant; a replay's may be `revoked` or `expired`.
        package var state: State = .active
    }

    /// A grant refused because its idempotency key names an earlier grant of another body (entitlement, coins, until
    /// or reason); nothing was written. The HTTP answer is `409 idempotency_conflict`, as a spend's (``CoinSpend``).
    package struct IdempotencyConflict: Error, Sendable {
        package init() {}
    }

    /// What `revoke` did.
    package struct Revoked: Sendable, Hashable {
        package var grant: Grant
        /// Coins taken back (a coin grant): `min(coins, coins.granted)`.
        package var taken: Int64
        package var balance: Int64
    }

    /// How long an idempotency key is kept (7 days).
    package static let idempotencyKeySeconds = 7 * 86_400

    /// `g_` and 16 random hex digits.
    package static func newGrantId() -> String {
        "g_" + String(format: "%016llx", UInt64.random(in: 0...UInt64.max))
    }

    /// The function's keys for one user (docs/CLUSTER.md: all in the user's partition's slot with several partitions).
    static func functionKeys(user: String, keys: Keys) -> [String] {
        let partition = keys.partition(ofUser: user)
        return [
            keys.account(user: user), keys.ledgerMeta(user: user), keys.grants(user: user), keys.grantsDue(partition: partition),
            keys.events(partition: partition).stream, keys.userEvents(user: user), keys.revokedGrants(user: user),
        ]
    }

    /// The request of one call; `project` outside the default project (docs/PROJECTS.md): its events carry it.
    private static func requestJSON(
        user: String, grantId: String, now: Int64, project: ProjectID, log: UserEventLog, _ more: (inout JSONWriter) -> Void = { _ in }
    ) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.beginObject()
        writer.member("user", user)
        writer.member("grantId", grantId)
        writer.member("now", now)
        // Outside the default project its events carry `project` and count in `<project>/<user>` (docs/PROJECTS.md).
        if let project = project.label { writer.member("project", project) }
        writer.member("ulogCap", log.cap)
        writer.member("ulogTtl", log.retentionSeconds)
        more(&writer)
        writer.endObject()
        return writer.bytes
    }

    private static func answer(_ reply: RedisReply, _ function: String) throws -> JSONFields {
        guard let bytes = reply.bytes, let value = try? JSONReader.parse(bytes), let fields = try? JSONFields(value) else {
            throw LedgerError.unexpectedReply("\(function) returned \(reply)")
        }
        return fields
    }

    private static func grant(in fields: JSONFields, _ function: String) throws -> Grant {
        guard let object = try? fields.optionalObject("grant"), let grant = Grant(fields: object) else {
            throw LedgerError.unexpectedReply("\(function) answered no grant")
        }
        return grant
    }

    /// The most grants one user holds at once (revoked and expired ones do not count): coin grants never end, so
    /// without a cap a grant key could grow a user's grants, and every read of them, without bound.
    package static let maxHeld = 100

    /// A grant refused because the user holds ``maxHeld`` grants already; nothing was written.
    package struct TooManyGrants: Error, Sendable {
        package var held: Int
    }

    /// Writes a grant and its `grant.created` event (or, with an idempotency key already used for the same body, answers
    /// its grant and state). Throws ``TooManyGrants`` when the user holds ``maxHeld`` grants, ``IdempotencyConflict``
    /// when the key was used for another body.
    package static func grant(
        _ request: Request, keys: Keys, userEventLog: UserEventLog = UserEventLog(), on redis: any RedisCommandExecutor
    ) async throws -> Created {
        guard let created = try await call(request, replayOnly: false, keys: keys, userEventLog: userEventLog, on: redis) else {
            throw LedgerError.unexpectedReply("grant answered not_found")
        }
        return created
    }

    /// The earlier grant that `request`'s idempotency key names, with its state now, writing nothing: for a body whose
    /// `until` has passed, which can only be a retry (issue 42, item 9). Nil when the key names no grant (or the
    /// request has none); throws ``IdempotencyConflict`` when it names another body.
    package static func replay(
        _ request: Request, keys: Keys, userEventLog: UserEventLog = UserEventLog(), on redis: any RedisCommandExecutor
    ) async throws -> Created? {
        guard request.idempotencyKey != nil else { return nil }
        return try await call(request, replayOnly: true, keys: keys, userEventLog: userEventLog, on: redis)
    }

    private static func call(
        _ request: Request, replayOnly: Bool, keys: Keys, userEventLog: UserEventLog, on redis: any RedisCommandExecutor
    ) async throws -> Created? {
        var functionKeys = functionKeys(user: request.user, keys: keys)
        if let key = request.idempotencyKey { functionKeys.append(keys.grantIdempotency(user: request.user, key: key)) }
        let body = requestJSON(user: request.user, grantId: request.grantId, now: request.now, project: keys.project, log: userEventLog) {
            writer in
            writer.member("entitlement", request.entitlement)
            writer.member("coins", request.coins)
            writer.member("until", request.until)
            writer.member("reason", request.reason)
            writer.member("by", request.by)
            writer.member("keyTtl", idempotencyKeySeconds)
            writer.member("maxHeld", maxHeld)
            if replayOnly { writer.member("replayOnly", true) }
        }
        let reply = try await LedgerFunctions.library.call("grant", on: redis, keys: functionKeys, arguments: [body])
        let fields = try answer(reply, "grant")
        switch try? fields.string("outcome") {
        case "too_many_grants": throw TooManyGrants(held: Int((try? fields.int64("held")) ?? Int64(maxHeld)))
        case "conflict": throw IdempotencyConflict()
        case "not_found": return nil
        default: break
        }
        let grant = try grant(in: fields, "grant")
        let isNew = (try? fields.string("outcome")) == "granted"
        let balance = isNew ? (try? fields.int64("balance")) : nil
        guard let state = (try? fields.string("state")).flatMap(State.init(rawValue:)) else {
            throw LedgerError.unexpectedReply("grant answered no state")
        }
        return Created(grant: grant, isNew: isNew, balance: balance, state: state)
    }

    /// Revokes a grant and writes `grant.revoked`; nil when the user has no such grant (revoked or expired already).
    package static func revoke(
        user: String, grantId: String, by: String, now: Int64, keys: Keys, userEventLog: UserEventLog = UserEventLog(),
        on redis: any RedisCommandExecutor
    ) async throws -> Revoked? {
        let body = requestJSON(user: user, grantId: grantId, now: now, project: keys.project, log: userEventLog) {
            $0.member("by", by)
            $0.member("keyTtl", idempotencyKeySeconds)
        }
        let reply = try await LedgerFunctions.library.call(
            "revoke", on: redis, keys: functionKeys(user: user, keys: keys), arguments: [body])
        let fields = try answer(reply, "revoke")
        guard (try? fields.string("outcome")) == "revoked" else { return nil }
        return Revoked(
            grant: try grant(in: fields, "revoke"), taken: (try? fields.int64("taken")) ?? 0,
            balance: (try? fields.int64("balance")) ?? 0)
    }

    /// Expires the grants of `partition` whose `until` is at or before `now` (at most `limit`), each with its
    /// `grant.expired` event; returns how many expired. The fulfiller's sweeper calls it every few seconds.
    package static func expireDue(
        partition: Partition, now: Int64, keys: Keys, userEventLog: UserEventLog = UserEventLog(), limit: Int = 100,
        on redis: any RedisCommandExecutor
    ) async throws -> Int {
        let due = try await redis.send(
            RedisCommand("ZRANGE", key: keys.grantsDue(partition: partition), "-inf", now, "BYSCORE", "LIMIT", 0, limit))
        var expired = 0
        for member in (due.array ?? []).compactMap(\.string) {
            guard let value = try? JSONReader.parse(Array(member.utf8)), case .array(let parts) = value, parts.count == 2,
                case .string(let user) = parts[0], case .string(let grantId) = parts[1], UserID.isValid(user)
            else {
                _ = try await redis.send(RedisCommand("ZREM", key: keys.grantsDue(partition: partition), member))
                continue
            }
            let body = requestJSON(user: user, grantId: grantId, now: now, project: keys.project, log: userEventLog)
            let reply = try await LedgerFunctions.library.call(
                "expire_grant", on: redis, keys: functionKeys(user: user, keys: keys), arguments: [body])
            if reply.int == 1 { expired += 1 }
        }
        return expired
    }

    /// A user's grants (expired ones the sweeper has not removed yet included), oldest first.
    package static func list(user: String, keys: Keys, on redis: any RedisCommandExecutor) async throws -> [Grant] {
        let reply = try await redis.send(RedisCommand("HVALS", key: keys.grants(user: user)))
        return parse(values: (reply.array ?? []).compactMap(\.bytes))
    }

    /// Stored values as grants, oldest first (unreadable values left out).
    package static func parse(values: [[UInt8]]) -> [Grant] {
        values.compactMap { Grant(json: $0) }.sorted { ($0.at, $0.grantId) < ($1.at, $1.grantId) }
    }
}
