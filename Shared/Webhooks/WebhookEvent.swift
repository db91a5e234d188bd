package import Pipeline
package import Redis

/// One schema-2 entry of an events stream, as the notifier delivers it (the contract of issue 30: `event.version` =
/// `2`, `event.id`, `event.type`, `seq` per user, `user` when the event is a user's, `event` = the JSON object text).
package struct WebhookEvent: Sendable {
    /// The sequence of app-level events (entries without `user`), kept under this subject.
    package static let appSubject = "~app"

    package var entryID: String
    package var eventID: String
    package var seq: Int64
    package var user: String?
    /// The ledger side the event is of (its entry's `side`, ``LedgerSide``): the sandbox side counts its own seq.
    package var side: LedgerSide
    /// The event's JSON text exactly as written: the request body, never re-encoded.
    package var body: [UInt8]
    /// The event's `type`, when its JSON has one.
    package var type: String?

    /// Reads an entry; nil when a schema-2 field is missing or malformed (the entry is dead-lettered).
    package init?(entry: StreamEntry) {
        guard let eventID = entry.string("event.id"), !eventID.isEmpty,
            let seqText = entry.string("seq"), let seq = Int64(seqText), seq > 0,
            let body = entry.fields["event"], !body.isEmpty
        else { return nil }
        self.entryID = entry.id
        self.eventID = eventID
        self.seq = seq
        self.user = entry.string("user").flatMap { $0.isEmpty ? nil : $0 }
        guard let side = LedgerSide(label: entry.string("side")) else { return nil }
        self.side = side
        self.body = body
        // The type is a field of the entry beside the JSON (docs/EVENTS.md): the event, up to ~19 KB with Apple's JWS,
        // is forwarded as bytes and never parsed here.
        self.type = entry.string("event.type")
    }

    /// Whose sequence `seq` belongs to: the user, the user's sandbox side (`<user>~sandbox`; `~` is in no user id), or
    /// ``appSubject``.
    package var subject: String { Self.subject(user: user, side: side) }

    /// The subject of an entry's `user` and side.
    package static func subject(user: String?, side: LedgerSide) -> String {
        guard let user else { return appSubject }
        return side == .sandbox ? "\(user)~sandbox" : user
    }

    /// When the ledger wrote the entry (its id's milliseconds).
    package var writtenAtMilliseconds: Int64 { Self.milliseconds(ofEntry: entryID) }

    static func milliseconds(ofEntry id: String) -> Int64 {
        Int64(id.split(separator: "-").first ?? "") ?? 0
    }
}
