import Core
import Foundation
import Hummingbird
import Ledger
import Logging
import Pipeline

extension IngestRoutes {
    /// The longest a tester mark may run: 10 years, as a grant.
    static let maximumTesterMilliseconds: Int64 = 3653 * 86_400_000

    /// Whether `userID`'s sandbox side counts as production value (issue 42; docs/ARCHITECTURE.md, invariant 11): for
    /// every user under `TOLLGATE_SANDBOX_VALUE=everyone`, else for a tester of this copy's ``project`` only
    /// (``Ledger/Testers``).
    func sandboxCounts(for userID: String) async throws -> Bool {
        if configuration.sandboxValue == .everyone { return true }
        return try await redisRead {
            try await Testers.isTester(user: userID, now: clock.nowMilliseconds(), keys: keys, on: redis)
        }
    }

    /// `PUT /v1/admin/testers/{userId}` `{"until"?: "<ISO 8601>", "reason"?: "…"}` (a service key with `admin`): marks
    /// the user a tester of the key's project — their sandbox side counts as production value — and writes
    /// `tester.added` in the user's sequence → `200 {userId, at, by, until, reason, active, changed, seq?, eventId?}`.
    /// The same mark again writes nothing (`changed: false`). `400 invalid_until` (not ISO 8601, not in the future,
    /// more than 10 years ahead), `400 invalid_reason`, `400 invalid_request` (another member, the user id).
    func addTester(_ request: Request, userID: String) async throws -> Response {
        let caller = try await authenticator.service(request, scope: .admin)
        let keys = scoped(to: caller.project).keys  // the key's project's testers only (docs/PROJECTS.md)
        guard UserID.isValid(userID) else { throw IngestError.invalidRequest("the user id is not valid") }
        let raw = try await body(of: request, limit: 2048)
        let fields = try Submission.jsonFields(raw.isEmpty ? Array("{}".utf8) : raw)
        let now = clock.nowMilliseconds()
        let (until, reason) = try Self.testerMark(fields, now: now)
        let change = try await redisRead {
            try await Testers.add(
                user: userID, until: until, reason: reason, by: caller.name, now: now, keys: keys,
                userEventLog: configuration.userEventLog, on: redis)
        }
        let mark = try await redisRead { try await Testers.mark(user: userID, keys: keys, on: redis) }
        if case .changed = change {
            logger.info("tester added", metadata: ["user.id": "\(userID)", "key": "\(caller.name)", "project": "\(caller.project)"])
        }
        return jsonResponse(.ok) { answer in
            (mark ?? Testers.Tester(user: userID, at: now, by: caller.name, until: until, reason: reason))
                .writeMembers(&answer, now: now)
            Self.writeChange(change, &answer)
        }
    }

    /// `DELETE /v1/admin/testers/{userId}` (a service key with `admin`): removes the mark and writes `tester.removed` →
    /// `200 {userId, removed: true, seq, eventId}`; `404 not_found` when the user is no tester of the key's project.
    func removeTester(_ request: Request, userID: String) async throws -> Response {
        let caller = try await authenticator.service(request, scope: .admin)
        let keys = scoped(to: caller.project).keys
        guard UserID.isValid(userID) else { throw IngestError.notFound("no tester \(userID.prefix(64))") }
        let change = try await redisRead {
            try await Testers.remove(
                user: userID, by: caller.name, now: clock.nowMilliseconds(), keys: keys,
                userEventLog: configuration.userEventLog, on: redis)
        }
        guard case .changed = change else { throw IngestError.notFound("user \(userID) is no tester") }
        logger.info("tester removed", metadata: ["user.id": "\(userID)", "key": "\(caller.name)", "project": "\(caller.project)"])
        return jsonResponse(.ok) { answer in
            answer.member("userId", userID)
            answer.member("removed", true)
            Self.writeChange(change, &answer)
        }
    }

    /// `GET /v1/admin/testers` (a service key with `admin`): the key's project's testers, by user id →
    /// `200 {testers: [{userId, at, by, until, reason, active}], sandboxValue}` (marks past their `until` listed with
    /// `active: false`).
    func listTesters(_ request: Request) async throws -> Response {
        let caller = try await authenticator.service(request, scope: .admin)
        let keys = scoped(to: caller.project).keys
        let testers = try await redisRead { try await Testers.list(keys: keys, on: redis) }
        let now = clock.nowMilliseconds()
        return jsonResponse(.ok) { answer in
            answer.member("sandboxValue", configuration.sandboxValue.rawValue)
            answer.key("testers")
            answer.beginArray()
            for tester in testers {
                answer.beginObject()
                tester.writeMembers(&answer, now: now)
                answer.endObject()
            }
            answer.endArray()
        }
    }

    private static func writeChange(_ change: Testers.Change, _ answer: inout JSONWriter) {
        if case .changed(let seq, let eventId) = change {
            answer.member("changed", true)
            answer.member("seq", seq)
            answer.member("eventId", eventId)
        } else {
            answer.member("changed", false)
        }
    }

    /// The mark a body asks for: `until` (ISO 8601, in the future, at most 10 years ahead) and `reason` (1–200
    /// bytes), both optional; any other member is refused.
    static func testerMark(_ fields: JSONFields, now: Int64) throws(IngestError) -> (until: Int64?, reason: String?) {
        if let unknown = fields.members.keys.sorted().first(where: { $0 != "until" && $0 != "reason" }) {
            throw .invalidRequest("unknown member '\(unknown.prefix(64))' (known: reason, until)")
        }
        let untilText: String?
        let reason: String?
        do {
            untilText = try fields.optionalString("until")
            reason = try fields.optionalString("reason")
        } catch {
            throw .invalidRequest("until and reason must be strings")
        }
        if let reason, !(1...Testers.maxReasonBytes).contains(reason.utf8.count) { throw .invalidReason() }
        guard let untilText else { return (nil, reason) }
        guard let until = milliseconds(iso8601: untilText) else {
            throw .invalidUntil("until must be an ISO 8601 time such as 2026-12-31T00:00:00Z")
        }
        guard until > now else { throw .invalidUntil("until must be in the future") }
        guard until - now <= maximumTesterMilliseconds else { throw .invalidUntil("until must be at most 10 years ahead") }
        return (until, reason)
    }
}
