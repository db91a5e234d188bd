import Core
import Hummingbird
import Ledger
import Pipeline
import Redis

extension IngestRoutes {
    /// The most events one page answers.
    static let maxEventsPage = 1000

    /// `GET /v1/users/{userId}/events?after=SEQ&limit=N` (a service key): the user's schema-v2 events with a `seq`
    /// above `after` (0: from the first), oldest first, at most `limit` (100; 1–1000), from the user's own log
    /// (``Ledger/UserEventLog``; docs/EVENTS.md, "Pulling"). The events are the bytes the ledger wrote, not parsed
    /// and written again. The answer also says the user's last `seq` and the oldest the log still holds, so a
    /// consumer that tracks `seq` proves it missed nothing: `trimmed` is true when events after `after` are gone.
    /// `side=sandbox` reads the user's sandbox side (``LedgerSide``), whose events count their own `seq`.
    func userEvents(_ request: Request, userID: String) async throws -> Response {
        let caller = try await authenticator.service(request, scope: .read)
        guard UserID.isValid(userID) else { throw IngestError.notFound("no user \(userID.prefix(64))") }
        let after = try Self.queryInteger(request, "after", default: 0, range: 0...Int64(1) << 53)
        let limit = Int(try Self.queryInteger(request, "limit", default: 100, range: 1...Int64(Self.maxEventsPage)))
        let side = try Self.querySide(request)
        // The key's project's ledger only (docs/PROJECTS.md).
        let keys = scoped(to: caller.project).keys.on(side)
        let log = keys.userEvents(user: userID)
        let replies = try await redisRead {
            try await redis.pipeline([
                RedisCommand("XRANGE", key: log, "\(after + 1)-0", "+", "COUNT", limit),
                RedisCommand("HGET", key: keys.account(user: userID), "events.seq"),
                RedisCommand("XRANGE", key: log, "-", "+", "COUNT", 1),
            ])
        }
        guard replies.count == 3 else { throw RedisError.protocolError("the event log read returned \(replies.count) replies") }
        let page = try StreamEntry.list(replies[0])
        let lastSeq = replies[1].string.flatMap { Int64($0) } ?? 0
        let oldestSeq = try StreamEntry.list(replies[2]).first.flatMap(Self.seq(of:))
        let next = page.last.flatMap(Self.seq(of:)) ?? after
        return jsonResponse(.ok) { writer in
            writer.member("userId", userID)
            writer.member("side", side.label)
            writer.key("events")
            writer.beginArray()
            for entry in page { if let event = entry.fields["event"] { writer.rawJSON(event) } }
            writer.endArray()
            writer.member("next", next)
            writer.member("lastSeq", lastSeq)
            writer.member("oldestSeq", oldestSeq)
            writer.member("hasMore", next < lastSeq)
            writer.member("trimmed", after < lastSeq && (oldestSeq.map { $0 > after + 1 } ?? true))
        }
    }

    /// The `side` query parameter: absent (the primary side) or `sandbox`, else `400 invalid_request`.
    static func querySide(_ request: Request) throws(IngestError) -> LedgerSide {
        let text = request.uri.queryParameters.get("side")
        guard let side = LedgerSide(label: text) else { throw .invalidRequest("side must be sandbox, or absent") }
        return side
    }

    /// A log entry's `seq`: its id is `<seq>-0`.
    private static func seq(of entry: StreamEntry) -> Int64? {
        entry.id.split(separator: "-").first.flatMap { Int64($0) }
    }

    /// A whole-number query parameter in `range`, else `400 invalid_request` naming it.
    static func queryInteger(
        _ request: Request, _ name: String, default value: Int64, range: ClosedRange<Int64>
    ) throws(IngestError) -> Int64 {
        guard let text = request.uri.queryParameters.get(name) else { return value }
        guard text.utf8.count <= 20, let number = Int64(text), range.contains(number) else {
            throw .invalidRequest("\(name) must be a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }
}
