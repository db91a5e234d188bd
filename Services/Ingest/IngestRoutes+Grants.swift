import Core
import Foundation
import Hummingbird
import Ledger
import Logging
import Pipeline

extension IngestRoutes {
    /// The longest a grant may run: 10 years (3,653 days) from now.
    static let maximumGrantMilliseconds: Int64 = 3653 * 86_400_000
    /// The most coins one grant may give.
    static let maximumGrantCoins: Int64 = 1_000_000_000

    /// `POST /v1/users/{userId}/grants` (a service key with the `grant` scope):
    /// `{"entitlement": "vip", "until": "<ISO 8601>", "reason": "…", "idempotencyKey"?: "…"}` or, with
    /// `TOLLGATE_COIN_GRANTS=true`, `{"coins": N, "reason": "…"}` → `201 {grantId, userId, entitlement | coins,
    /// until, reason, by, at, state}` (`balance` with coins); a retry with the same `idempotencyKey` (kept 7 days) and
    /// the same body (entitlement, coins, until, reason as sent) writes nothing and answers the first grant with `200`,
    /// `replayed: true` and its `state` now (`active`, `revoked`, `expired`), even once its `until` has passed (issue
    /// 42, item 9). The grant, its due entry and its `grant.created` event are one ledger call (``LedgerGrants``); it
    /// never touches Apple's records. Refused, nothing written: `400 invalid_request` (members), `400 invalid_until`
    /// (not ISO 8601, not in the future unless a replay, more than 10 years ahead), `400 invalid_reason` (not 1–200
    /// bytes, or a NUL), `422 unknown_entitlement` (no catalog product grants it), `403 coin_grants_disabled`,
    /// `409 too_many_grants` (the user holds ``Ledger/LedgerGrants/maxHeld`` grants), `409 idempotency_conflict` (the
    /// key was used for another body, as for spends).
    func createGrant(_ request: Request, userID: String) async throws -> Response {
        let caller = try await authenticator.service(request, scope: .grant)
        // The key's project's ledger and catalog only (docs/PROJECTS.md).
        let routes = scoped(to: caller.project)
        let keys = routes.keys
        guard UserID.isValid(userID) else { throw IngestError.invalidRequest("the user id is not valid") }
        let fields = try Submission.jsonFields(try await body(of: request, limit: 4096))
        let now = clock.nowMilliseconds()
        var grant = try routes.grantRequest(fields, userID: userID, now: now)
        grant.by = caller.name
        let created = try await redisRead {
            do {
                // A body whose `until` has passed can only be a retry of a grant made before then: it replays one, or
                // is refused as any grant ending in the past is.
                if let until = grant.until, until <= now {
                    guard
                        let replayed = try await LedgerGrants.replay(
                            grant, keys: keys, userEventLog: configuration.userEventLog, on: redis)
                    else { throw IngestError.invalidUntil("until must be in the future") }
                    return replayed
                }
                return try await LedgerGrants.grant(grant, keys: keys, userEventLog: configuration.userEventLog, on: redis)
            } catch let refusal as LedgerGrants.TooManyGrants {
                throw IngestError.tooManyGrants(held: refusal.held)
            } catch is LedgerGrants.IdempotencyConflict {
                throw IngestError.idempotencyConflict(
                    "this idempotencyKey was used for another grant (entitlement, coins, until or reason); nothing was granted")
            }
        }
        if created.isNew {
            logger.info(
                "grant created",
                metadata: [
                    "user.id": "\(userID)", "grant.id": "\(created.grant.grantId)", "key": "\(caller.name)",
                    "entitlement": "\(created.grant.entitlement ?? "-")", "coins": "\(created.grant.coins ?? 0)",
                ])
        }
        return jsonResponse(created.isNew ? .created : .ok) { answer in
            created.grant.writeMembers(&answer)
            answer.member("userId", userID)
            answer.member("balance", created.balance)
            answer.member("state", created.state.rawValue)
            if !created.isNew { answer.member("replayed", true) }
        }
    }

    /// `DELETE /v1/users/{userId}/grants/{grantId}` (a service key with the `grant` scope): revokes the grant and
    /// writes `grant.revoked` → `200 {grantId, userId, entitlement | coins, until, reason, by, at, revokedBy,
    /// revokedAt}` (with `coinsTaken` and `balance` for coins: `min(coins, coins.granted)` is taken back, never below
    /// zero); `404 not_found` when the user has no such grant (revoked or expired already).
    func revokeGrant(_ request: Request, userID: String, grantID: String) async throws -> Response {
        let caller = try await authenticator.service(request, scope: .grant)
        let keys = scoped(to: caller.project).keys  // the key's project's ledger only (docs/PROJECTS.md)
        guard UserID.isValid(userID), Self.isToken(grantID) else {
            throw IngestError.notFound("no grant \(grantID.prefix(64))")
        }
        let now = clock.nowMilliseconds()
        let revoked = try await redisRead {
            try await LedgerGrants.revoke(
                user: userID, grantId: grantID, by: caller.name, now: now, keys: keys,
                userEventLog: configuration.userEventLog, on: redis)
        }
        guard let revoked else { throw IngestError.notFound("user \(userID) has no grant \(grantID)") }
        logger.info("grant revoked", metadata: ["user.id": "\(userID)", "grant.id": "\(grantID)", "key": "\(caller.name)"])
        return jsonResponse(.ok) { answer in
            revoked.grant.writeMembers(&answer)
            answer.member("userId", userID)
            answer.member("revokedBy", caller.name)
            answer.member("revokedAt", EntitlementsView.iso8601(now))
            if revoked.grant.coins != nil {
                answer.member("coinsTaken", revoked.taken)
                answer.member("balance", revoked.balance)
            }
        }
    }

    /// The request's grant (its `by` filled in by the caller), or the refusal. An `until` not after `now` is left to
    /// the caller, which refuses it unless the request replays an earlier grant.
    func grantRequest(_ fields: JSONFields, userID: String, now: Int64) throws(IngestError) -> LedgerGrants.Request {
        let known: Set<String> = ["entitlement", "coins", "until", "reason", "idempotencyKey"]
        if let unknown = fields.members.keys.sorted().first(where: { !known.contains($0) }) {
            throw .invalidRequest("unknown member '\(unknown.prefix(64))' (known: coins, entitlement, idempotencyKey, reason, until)")
        }
        let reason: String
        let idempotencyKey: String?
        let entitlement: String?
        let coins: Int64?
        let untilText: String?
        do {
            entitlement = try fields.optionalString("entitlement")
            coins = try fields.optionalInt64("coins")
            untilText = try fields.optionalString("until")
            idempotencyKey = try fields.optionalString("idempotencyKey")
            guard let text = try fields.optionalString("reason") else { throw IngestError.invalidReason() }
            reason = text
        } catch let error as IngestError {
            throw error
        } catch {
            throw .invalidRequest("\(error)")
        }
        // Text the export cannot store (a NUL: PostgreSQL refuses it) is refused here, not dead-lettered there.
        guard (1...200).contains(reason.utf8.count), Self.isStorable(reason) else { throw .invalidReason() }
        if let idempotencyKey, !Self.isToken(idempotencyKey) {
            throw .invalidRequest("idempotencyKey must be 1-64 letters, digits, '.', '_' or '-'")
        }
        var grant = LedgerGrants.Request(user: userID, reason: reason, by: "", now: now, idempotencyKey: idempotencyKey)
        switch (entitlement, coins) {
        case (let name?, nil):
            guard !name.isEmpty, catalog.names(entitlement: name) else {
                throw .unknownEntitlement(name)
            }
            guard let untilText else { throw .invalidUntil("until is required with an entitlement") }
            guard let until = Self.milliseconds(iso8601: untilText) else {
                throw .invalidUntil("until must be an ISO 8601 time such as 2026-12-31T00:00:00Z")
            }
            guard until - now <= Self.maximumGrantMilliseconds else {
                throw .invalidUntil("until must be at most 10 years ahead")
            }
            grant.entitlement = name
            grant.until = until
        case (nil, let count?):
            guard configuration.coinGrants else { throw .coinGrantsDisabled() }
            guard (1...Self.maximumGrantCoins).contains(count) else {
                throw .invalidRequest("coins must be a whole number from 1 to \(Self.maximumGrantCoins)")
            }
            guard untilText == nil else { throw .invalidRequest("a coin grant has no until (coins do not expire)") }
            grant.coins = count
        default:
            throw .invalidRequest("give exactly one of entitlement (with until) and coins")
        }
        return grant
    }

    /// An ISO 8601 time (`2026-12-31T00:00:00Z`, with or without fractional seconds, any offset) in ms.
    static func milliseconds(iso8601 text: String) -> Int64? {
        guard text.utf8.count <= 40 else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return Int64((date.timeIntervalSince1970 * 1000).rounded()) }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text).map { Int64(($0.timeIntervalSince1970 * 1000).rounded()) }
    }

    /// Whether the export can store `text` as it is: PostgreSQL's `text` cannot hold a NUL (U+0000), so text
    /// Tollgate accepts holds none (docs/EXPORT.md, "Text PostgreSQL cannot store"); the JSON reader has already
    /// refused bytes that are not UTF-8.
    static func isStorable(_ text: String) -> Bool { !text.utf8.contains(0) }

    /// 1–64 of `[A-Za-z0-9._-]`: a grant id or an idempotency key.
    static func isToken(_ text: String) -> Bool {
        PlainIdentifier.isValid(text)
    }
}
