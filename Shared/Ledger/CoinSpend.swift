import Core
package import Pipeline
package import Redis

/// A service spending a user's coins (`POST /v1/users/{userId}/coins/spend`, issue 31 item 4): one call of
/// `ledger_v9_spend` (`Lua/ledger_spend.lua`) in the user's slot, which takes the coins only when the balance covers
/// them, writes the `coins.spent` event (docs/EVENTS.md) with the next `seq`, and remembers the answer under the
/// idempotency key for ``retentionSeconds``.
///
/// - The record is the calling key's (``Keys/coinSpend(user:by:idempotencyKey:)``: the user, the key's name `by`, the
///   idempotency key), so that two service keys' same idempotency key are two spends; a rotated key keeps its name,
///   and so its records (issue 42, item 12). For the rolling upgrade the previous release's shape (per user only,
///   ``Keys/legacyCoinSpend(user:idempotencyKey:)``) is kept both ways: read when the key's own record is absent (one
///   the previous release wrote, or this key's), so a retry of a spend made before the upgrade replays; and written
///   when absent, naming the key, so a retry that reaches a replica of the previous release replays too. Both can go
///   in the release after this one, once the previous release's records (``retentionSeconds``) are gone.
/// - A retry with the same key and the same amount and reason gets the remembered answer (``Receipt/replayed``),
///   writing nothing; the same key with another amount or reason is ``Outcome/conflict``.
/// - A refused spend (``Outcome/insufficient``) writes and remembers nothing: its retry is judged against the balance
///   then, so it may succeed once coins were credited meanwhile.
/// - The account hash keeps ``Field/spent`` (every coin ever spent: ``LedgerAudit`` counts it) and, once grants keep
///   it, ``Field/granted`` (granted coins still unspent). A spend draws purchased coins first: it lowers `granted`
///   only to the new balance when the balance falls below it, so the `CONSUMPTION_REQUEST` answer (purchased coins
///   remaining = balance − granted) reports more consumed, never less — the side that does not help refund fraud.
/// - The user's sandbox side (``LedgerSide``: App Review and TestFlight purchases, free to anyone with a TestFlight
///   link) counts only for a tester (``Testers``, read in the same call) or when ``allowSandbox`` says so (the
///   request's `allowSandbox`, or `TOLLGATE_SANDBOX_VALUE=everyone`); elsewhere only production coins are spent (issue
///   42). Where it counts, its coins are spent first, each side that pays writing its own `coins.spent` event in its
///   own sequence (``Receipt/sandboxAmount``).
package struct CoinSpend: Sendable, Hashable {
    package var user: String
    package var amount: Int64
    package var reason: String
    package var idempotencyKey: String
    /// The name of the service key that spent (ingest passes the key's name, never the key), recorded as `by`.
    package var by: String
    /// Whether the sandbox side may pay whoever the user is: the request's `allowSandbox: true`, or
    /// `TOLLGATE_SANDBOX_VALUE=everyone`. False: only a tester's sandbox side pays.
    package var allowSandbox = false

    package static let amounts: ClosedRange<Int64> = 1...1_000_000_000_000
    package static let maxReasonBytes = 200
    package static let maxIdempotencyKeyBytes = 128
    /// How long a spend's answer is kept for retries with its idempotency key: 7 days.
    package static let retentionSeconds = 7 * 86_400

    package init(user: String, amount: Int64, reason: String, idempotencyKey: String, by: String, allowSandbox: Bool = false) {
        (self.user, self.amount, self.reason, self.idempotencyKey, self.by) = (user, amount, reason, idempotencyKey, by)
        self.allowSandbox = allowSandbox
    }

    /// The account hash's fields a spend writes besides `coins` (``EntitlementsView/Field``).
    package enum Field {
        /// Every coin ever spent (never lowered): the audit's balance is credited − refunded − spent.
        package static let spent = "coins.spent"
        /// Granted coins still unspent (absent = 0), written by grants and lowered by spends.
        package static let granted = "coins.granted"
    }

    /// A spend that happened.
    package struct Receipt: Sendable, Hashable {
        package var amount: Int64
        /// The counted balance right after this spend: production's, and the sandbox side's where it counts.
        package var balance: Int64
        /// The `coins.spent` event's `seq` and `id`: the primary side's when it paid anything, else the sandbox side's.
        package var seq: Int64
        package var eventId: String
        /// What the user's sandbox side paid (0: nothing), and its event when the primary side paid the rest.
        package var sandboxAmount: Int64 = 0
        package var sandboxSeq: Int64?
        package var sandboxEventId: String?
        /// The side ``seq`` counts in: the sandbox side when it paid everything.
        package var side = LedgerSide.primary
        /// When the ledger applied it (ms since 1970).
        package var at: Int64
        /// The remembered answer of an earlier call with the same key and body: nothing was written now.
        package var replayed: Bool

        /// ``at`` as the HTTP answers write times: ISO 8601 UTC with milliseconds.
        package var iso8601: String { EntitlementsView.iso8601(at) }

        package init(amount: Int64, balance: Int64, seq: Int64, eventId: String, at: Int64, replayed: Bool) {
            (self.amount, self.balance, self.seq, self.eventId, self.at, self.replayed) =
                (amount, balance, seq, eventId, at, replayed)
        }
    }

    package enum Outcome: Sendable, Hashable {
        case spent(Receipt)
        /// The counted balance is below the amount; nothing written.
        case insufficient(balance: Int64)
        /// The idempotency key was used with another amount or reason; nothing written.
        case conflict
    }

    /// Whether `key` is a usable idempotency key: 1–128 bytes of `[A-Za-z0-9._:-]`.
    package static func isValidIdempotencyKey(_ key: String) -> Bool {
        let bytes = key.utf8
        guard !bytes.isEmpty, bytes.count <= maxIdempotencyKeyBytes else { return false }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "-")
        }
    }

    /// Whether `reason` is usable: 1–200 bytes.
    package static func isValidReason(_ reason: String) -> Bool { (1...maxReasonBytes).contains(reason.utf8.count) }

    /// The `KEYS` of the call, all in the user's partition slot (docs/CLUSTER.md §4): the key's record, both sides'
    /// accounts and logs, the user's tester mark, and the previous release's record.
    package func keys(_ unsided: Keys) -> [String] {
        let keys = unsided.on(.primary)
        let sandbox = unsided.on(.sandbox)
        return [
            keys.coinSpend(user: user, by: by, idempotencyKey: idempotencyKey), keys.userEvents(user: user),
            keys.events(partition: keys.partition(ofUser: user)).stream, keys.account(user: user),
            sandbox.account(user: user), sandbox.userEvents(user: user), keys.tester(user: user),
            keys.legacyCoinSpend(user: user, idempotencyKey: idempotencyKey),
        ]
    }

    /// The `FCALL` of this spend, for ``RedisFunctionLibrary/pipeline(_:on:durability:)``.
    package func command(keys: Keys, now: Int64, userEventLog: UserEventLog) -> RedisCommand {
        let arguments = [
            user, String(amount), reason, idempotencyKey, by, String(now), String(Self.retentionSeconds),
            String(userEventLog.cap), String(userEventLog.retentionSeconds), keys.project.label ?? "", allowSandbox ? "1" : "0",
        ]
        return LedgerFunctions.library.command(
            "spend", keys: self.keys(keys).map { Array($0.utf8) }, arguments: arguments.map { Array($0.utf8) })
    }

    /// Spends: one call, then `WAIT` when `durability` asks for replicas.
    /// - Returns: the outcome, and how many replicas acknowledged (nil without durability).
    package func run(
        on redis: any RedisCommandExecutor, keys: Keys, now: Int64, userEventLog: UserEventLog = UserEventLog(),
        durability: RedisDurability = RedisDurability()
    ) async throws -> (outcome: Outcome, replicas: Int?) {
        let (replies, replicas) = try await LedgerFunctions.library.pipeline(
            [command(keys: keys, now: now, userEventLog: userEventLog)], on: redis, durability: durability)
        guard let reply = replies.first else { throw LedgerError.unexpectedReply("spend: no reply") }
        if case .error(let text) = reply { throw RedisError.server(code: "ERR", message: text) }
        guard let bytes = reply.bytes else { throw LedgerError.unexpectedReply("spend returned \(reply)") }
        do {
            return (try Self.outcome(json: bytes), replicas)
        } catch {
            throw LedgerError.unexpectedReply("spend returned \(String(decoding: bytes, as: UTF8.self))")
        }
    }

    /// Reads the function's answer (numbers as decimal strings).
    static func outcome(json bytes: [UInt8]) throws(JSONError) -> Outcome {
        let fields = try JSONFields(JSONReader.parse(bytes))
        func number(_ name: String) throws(JSONError) -> Int64 {
            guard let value = Int64(try fields.string(name)) else { throw JSONError("\(name) is not a whole number") }
            return value
        }
        switch try fields.string("outcome") {
        case "spent":
            var receipt = Receipt(
                amount: try number("amount"), balance: try number("balance"), seq: try number("seq"),
                eventId: try fields.string("id"), at: try number("at"),
                replayed: try fields.optionalBool("replayed") ?? false)
            if try fields.optionalString("sandboxAmount") != nil { receipt.sandboxAmount = try number("sandboxAmount") }
            if try fields.optionalString("sandboxSeq") != nil { receipt.sandboxSeq = try number("sandboxSeq") }
            receipt.sandboxEventId = try fields.optionalString("sandboxId")
            if try fields.optionalString("side") == "sandbox" { receipt.side = .sandbox }
            return .spent(receipt)
        case "insufficient":
            return .insufficient(balance: try number("balance"))
        case "conflict":
            return .conflict
        case let other:
            throw JSONError("unknown outcome \(other)")
        }
    }
}
