import Core
import Foundation
import HTTPTypes
import Hummingbird
import Ledger
import Logging
import Pipeline
import Redis

extension IngestRoutes {
    /// The largest body a spend takes: three short members.
    static let spendBodyLimit = 4096

    /// `POST /v1/users/{userId}/coins/spend {"amount": N, "reason": "…", "idempotencyKey": "…", "allowSandbox"?: Bool}`
    /// (services with the `spend` scope; a user's token is refused): takes `amount` coins from the user's balance in one
    /// ledger call (``Ledger/CoinSpend``), never below zero, and writes the `coins.spent` event (docs/EVENTS.md). The
    /// user's sandbox side pays (first) only for a tester, with `allowSandbox: true`, or under
    /// `TOLLGATE_SANDBOX_VALUE=everyone` (issue 42); otherwise production coins alone count →
    /// `200 {userId, amount, balance, eventId, seq, at}`. A retry with the same key and body gets the same answer
    /// (header `Idempotent-Replayed: true`) and spends nothing more, for 7 days. Refusals: `400 invalid_request` (a
    /// member out of its bounds, the user id), `400 invalid_json`, `409 insufficient_coins` (with the `balance`;
    /// nothing remembered: a retry after a credit may succeed), `409 idempotency_conflict` (the key was used for
    /// another amount or reason), `503 redis_unavailable`, `503 replication_timeout` (retry with the same key).
    func spendCoins(_ request: Request, userID: String) async throws -> Response {
        let caller = try await authenticator.service(request, scope: .spend)
        let keys = scoped(to: caller.project).keys  // the key's project's ledger only (docs/PROJECTS.md)
        guard UserID.isValid(userID) else { throw IngestError.invalidRequest("the user id is not valid") }
        let fields = try Submission.jsonFields(try await body(of: request, limit: Self.spendBodyLimit))
        var spend = try Self.coinSpend(fields, user: userID, by: caller.name)
        if configuration.sandboxValue == .everyone { spend.allowSandbox = true }
        let durability = RedisDurability(
            replicas: configuration.waitReplicas, timeoutMilliseconds: configuration.waitTimeoutMilliseconds)
        let (outcome, replicas) = try await redisRead {
            try await spend.run(
                on: redis, keys: keys, now: clock.nowMilliseconds(), userEventLog: configuration.userEventLog,
                durability: durability)
        }
        switch outcome {
        case .spent(let receipt):
            // A spend the replicas may not hold yet is answered 503; the retry with the same key gets its answer.
            guard durability.isMet(by: replicas) else { throw IngestError.replicationTimeout() }
            if !receipt.replayed {
                logger.info(
                    "coins spent",
                    metadata: [
                        "user.id": "\(userID)", "amount": "\(receipt.amount)", "balance": "\(receipt.balance)",
                        "event.id": "\(receipt.eventId)", "key": "\(caller.name)",
                    ])
            }
            var response = jsonResponse(.ok) { answer in
                answer.member("userId", userID)
                answer.member("amount", receipt.amount)
                answer.member("balance", receipt.balance)
                answer.member("eventId", receipt.eventId)
                answer.member("seq", receipt.seq)
                answer.member("side", receipt.side.label)
                answer.member("at", receipt.iso8601)
                if receipt.sandboxAmount > 0 {
                    // The user's sandbox side's part (App Review, TestFlight), spent first, in its own sequence.
                    answer.member("sandboxAmount", receipt.sandboxAmount)
                    answer.member("sandboxEventId", receipt.sandboxEventId)
                    answer.member("sandboxSeq", receipt.sandboxSeq)
                }
            }
            if receipt.replayed, let name = HTTPField.Name("Idempotent-Replayed") { response.headers[name] = "true" }
            return response
        case .insufficient(let balance):
            throw IngestError.insufficientCoins(balance: balance, amount: spend.amount)
        case .conflict:
            throw IngestError.idempotencyConflict()
        }
    }

    /// The spend a body asks for, or `400 invalid_request` naming the member out of bounds: `amount` a JSON integer
    /// 1…10^12, `reason` 1–200 bytes with no NUL (PostgreSQL cannot store one), `idempotencyKey` 1–128 bytes of
    /// `[A-Za-z0-9._:-]`, `allowSandbox` a JSON Boolean when present.
    static func coinSpend(_ fields: JSONFields, user: String, by: String) throws(IngestError) -> CoinSpend {
        guard case .integer(let amount)? = fields.members["amount"], CoinSpend.amounts.contains(amount) else {
            throw .invalidRequest("amount must be a whole number from 1 to 1000000000000")
        }
        // Text the export cannot store (a NUL: PostgreSQL refuses it) is refused here, not dead-lettered there.
        guard case .string(let reason)? = fields.members["reason"], CoinSpend.isValidReason(reason),
            Self.isStorable(reason)
        else {
            throw .invalidRequest("reason must be a string of 1-\(CoinSpend.maxReasonBytes) bytes without NUL (U+0000)")
        }
        guard case .string(let key)? = fields.members["idempotencyKey"], CoinSpend.isValidIdempotencyKey(key) else {
            throw .invalidRequest(
                "idempotencyKey must be 1-\(CoinSpend.maxIdempotencyKeyBytes) letters, digits, '.', '_', ':' or '-'")
        }
        var allowSandbox = false
        switch fields.members["allowSandbox"] {
        case nil, .null?: break
        case .bool(let value)?: allowSandbox = value
        default: throw .invalidRequest("allowSandbox must be true or false")
        }
        return CoinSpend(user: user, amount: amount, reason: reason, idempotencyKey: key, by: by, allowSandbox: allowSandbox)
    }
}
