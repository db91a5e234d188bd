package import Core
import Foundation
package import Pipeline
package import Redis

/// Writes events-stream entries shaped as issue 30's schema-2 contract (the ledger's writer is being built
/// elsewhere): `event.version` = `2`, `event.id`, `seq` (1, 2, 3… per user; app-level events have their own),
/// `user` (absent for app-level events) and `event`, the JSON object text (docs/EVENTS.md's shape, with `at` in ISO 8601
/// and app-level events numbered per partition, `seqScope` `app.p<N>`), in the user's partition's stream.
package actor ContractEventWriter {
    /// One written entry.
    package struct Written: Sendable, Hashable {
        package var stream: String
        package var entryID: String
        package var eventID: String
        package var user: String?
        package var seq: Int64
        package var body: String
    }

    private let redis: any RedisCommandExecutor
    private let keys: Keys
    private var sequences: [String: Int64] = [:]

    package init(redis: any RedisCommandExecutor, keys: Keys) {
        self.redis = redis
        self.keys = keys
    }

    /// Appends the next event of `user` (nil: an app-level event, in partition 0) of `type`, on the user's ledger `side`
    /// (the sandbox side counts its own seq, and its entries and bodies say `side: sandbox`).
    @discardableResult
    package func append(
        user: String?, type: String = "coins", side: LedgerSide = .primary, project: ProjectID = .default
    ) async throws -> Written {
        // Each project's users count their own seq (docs/PROJECTS.md).
        let subject = (project.label.map { "\($0)/" } ?? "") + (user ?? "") + (side == .sandbox ? "~sandbox" : "")
        let seq = (sequences[subject] ?? 0) + 1
        sequences[subject] = seq
        let eventID = "ev-\(UUID().uuidString.lowercased())"
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let at = formatter.string(from: Date())
        let partition = user.map { keys.partition(ofUser: $0) } ?? 0
        let owner = user.map { #""userId":"\#($0)","seq":\#(seq)"# } ?? #""userId":null,"seq":\#(seq),"seqScope":"app.p\#(partition)""#
        let marker = (side == .sandbox ? #","side":"sandbox""# : "") + (project.label.map { #","project":"\#($0)""# } ?? "")
        let body = #"{"id":"\#(eventID)","type":"\#(type)",\#(owner),"at":"\#(at)","delta":5\#(marker)}"#
        let stream = keys.events(partition: partition).stream
        var fields: [(String, String)] = [
            ("event.version", "2"), ("event.id", eventID), ("event.type", type), ("seq", String(seq)),
        ]
        if let user { fields.append(("user", user)) }
        if let label = side.label { fields.append(("side", label)) }
        if let label = project.label { fields.append(("project", label)) }
        fields.append(("event", body))
        let arguments: [any RedisArgumentConvertible] = [stream, "*"] + fields.flatMap { [$0.0, $0.1] }
        let reply = try await redis.send(RedisCommand("XADD", arguments: arguments))
        guard let id = reply.string else { throw RedisError.protocolError("XADD returned \(reply)") }
        return Written(stream: stream, entryID: id, eventID: eventID, user: user, seq: seq, body: body)
    }
}
