import AppStore
import Core
import Hummingbird
import Pipeline
import Redis

extension IngestRoutes {
    /// `GET /v1/events?cursor=…&limit=N` (a service key): the whole fleet's schema-v2 events from every partition's
    /// events stream, oldest first by the time the ledger wrote them, at most `limit` (100; 1–1000), and the cursor
    /// to pass next. The cursor is opaque to callers: the last entry read in each partition, Base64URL; without one
    /// the feed starts at the oldest entry the streams hold. Per user, `seq` proves completeness (docs/EVENTS.md);
    /// this feed follows the streams, which are trimmed after `TOLLGATE_EVENTS_RETENTION_HOURS`. A key sees its own
    /// project's events only (docs/PROJECTS.md; an entry's `project`, absent in the default project); the cursor moves
    /// past the others.
    ///
    /// A page reads at most ``fleetReadCount(limit:partitions:)`` entries of each partition (at most `2 × limit +
    /// partitions` in all, never `limit` of each), so its cost follows `limit` however many partitions there are and whichever
    /// project asks. What it answers stops at the *horizon*: the smallest last entry id among the partitions whose
    /// read came back full. Below it every entry of every partition was read, so the page is a true prefix of the
    /// global order (entry id, then partition), and the next page starts right after it; above it a full partition
    /// may hold entries not read yet, so they wait for the next page. The page is never empty while the feed holds
    /// more: the partition that set the horizon gave at least one entry below it, and each page moves the cursor past
    /// every entry it consumed — other projects' entries included, which use up reads and answer nothing — so a page
    /// with no events but `hasMore: true` has still moved on.
    func fleetEvents(_ request: Request) async throws -> Response {
        let caller = try await authenticator.service(request, scope: .read)
        let project = caller.project.label
        let limit = Int(try Self.queryInteger(request, "limit", default: 100, range: 1...Int64(Self.maxEventsPage)))
        let partitions = keys.partitions
        var positions = try Self.cursorPositions(request.uri.queryParameters.get("cursor"), partitions: partitions.count)
        let count = Self.fleetReadCount(limit: limit, partitions: partitions.count)
        let replies = try await redisRead {
            try await redis.pipeline(
                partitions.map { partition in
                    let start = positions[partition.index].map { "(\($0)" } ?? "-"
                    return RedisCommand("XRANGE", key: keys.events(partition: partition).stream, start, "+", "COUNT", count)
                })
        }
        guard replies.count == partitions.count else {
            throw RedisError.protocolError("the events read returned \(replies.count) replies")
        }
        var candidates: [(id: StreamID, partition: Partition, entry: StreamEntry)] = []
        // The smallest last id among the partitions whose read came back full: entries past it may be unread.
        var horizon: StreamID?
        for (partition, reply) in zip(partitions, replies) {
            let entries = try StreamEntry.list(reply)
            var last: StreamID?
            for entry in entries {
                guard let id = StreamID(entry.id) else { continue }
                candidates.append((id, partition, entry))
                last = id
            }
            if entries.count >= count, let last { horizon = min(horizon ?? last, last) }
        }
        if let horizon { candidates.removeAll { $0.id > horizon } }
        candidates.sort { ($0.id, $0.partition) < ($1.id, $1.partition) }
        let page = candidates.prefix(limit)
        for taken in page { positions[taken.partition.index] = taken.id.description }
        let cursor = Base64URL.encode(Array(positions.map { $0 ?? "-" }.joined(separator: ",").utf8))
        return jsonResponse(.ok) { writer in
            writer.key("events")
            writer.beginArray()
            for taken in page where taken.entry.string("event.version") == "2" && taken.entry.string("project") == project {
                if let event = taken.entry.fields["event"] { writer.rawJSON(event) }
            }
            writer.endArray()
            writer.member("cursor", cursor)
            writer.member("hasMore", candidates.count > page.count || horizon != nil)
        }
    }

    /// The entries a fleet page reads of each partition: `2 × limit` shared among the partitions, at least one each
    /// (the least that orders a page at all) and never more than `limit` (one partition reads just its page), so a
    /// page reads at most `2 × limit + partitions` entries in all.
    static func fleetReadCount(limit: Int, partitions: Int) -> Int {
        max(1, min(limit, (2 * limit + partitions - 1) / max(1, partitions)))
    }

    /// Each partition's last entry read, from a cursor this endpoint gave (nil: from the start), else
    /// `400 invalid_request`. A cursor of another partition layout is refused, not misread.
    static func cursorPositions(_ cursor: String?, partitions: Int) throws(IngestError) -> [String?] {
        guard let cursor else { return Array(repeating: nil, count: partitions) }
        guard cursor.utf8.count <= 64 * partitions, let bytes = Base64URL.decode(cursor) else {
            throw .invalidRequest("cursor is not one this endpoint gave")
        }
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: ",", omittingEmptySubsequences: false)
        guard parts.count == partitions else {
            throw .invalidRequest("cursor was given for \(parts.count) partitions; the deployment has \(partitions)")
        }
        return try parts.map { (part) throws(IngestError) -> String? in
            if part == "-" { return nil }
            guard let id = StreamID(String(part)) else { throw .invalidRequest("cursor is not one this endpoint gave") }
            return id.description
        }
    }
}
