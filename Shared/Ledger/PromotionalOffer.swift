import Core

/// One promotional offer of a catalog product (`offers`), with the rule Tollgate signs it under
/// (`POST /v1/offers/promotional`).
///
/// In the catalog an entry is either the App Store Connect offer identifier alone (`"winback50"`: anyone, no limit) or
/// an object `{"id": "winback50", "eligibility": "lapsed", "perUser": 1, "window": "365d"}`:
/// - `eligibility` — who may have it, by the ledger's state of the product's subscription group: `active` (an
///   entitlement of the group is `active` or in its grace period), `lapsed` (none is, and one is `expired` or in
///   billing retry: a refunded subscription is neither) or `any` (the default);
/// - `perUser` — signatures one user may get within `window`, 1–100 (absent: no limit beyond the rate limit);
/// - `window` — how long a signature counts, and is kept: a duration such as `30d` or `12h`, 1 hour to 366 days
///   (`365d` when absent).
package struct PromotionalOffer: Sendable, Hashable, Codable, ExpressibleByStringLiteral {
    /// Who may be signed an offer.
    package enum Eligibility: String, Sendable, Hashable, Codable, CaseIterable {
        case any
        case active
        case lapsed
    }

    package var id: String
    package var eligibility: Eligibility
    package var perUser: Int?
    package var window: Duration?

    /// How long a signature counts (and is kept) when the catalog names no `window`.
    package static let defaultWindow = Duration.seconds(365 * 86_400)
    /// The longest `window`: signature records are kept no longer.
    package static let maximumWindow = Duration.seconds(366 * 86_400)
    /// The shortest `window`.
    package static let minimumWindow = Duration.seconds(3600)
    /// The most signatures kept per user and offer; also the largest `perUser`.
    package static let maximumRecords = 100

    package init(id: String, eligibility: Eligibility = .any, perUser: Int? = nil, window: Duration? = nil) {
        self.id = id
        self.eligibility = eligibility
        self.perUser = perUser
        self.window = window
    }

    package init(stringLiteral id: String) { self.init(id: id) }

    /// The window this offer's signatures count in.
    package var effectiveWindow: Duration { window ?? Self.defaultWindow }

    /// Whether the entry is a bare identifier: anyone, no limit, the default window.
    var isBare: Bool { eligibility == .any && perUser == nil && window == nil }

    private enum CodingKeys: String, CodingKey { case id, eligibility, perUser, window }

    /// A bare string, or the object form; an unknown member is refused (a misspelt rule must not sign for anyone).
    package init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), let id = try? single.decode(String.self) {
            self.init(id: id)
            return
        }
        let container = try decoder.container(keyedBy: AnyKey.self)
        for key in container.allKeys where CodingKeys(stringValue: key.stringValue) == nil {
            throw DecodingError.dataCorruptedError(
                forKey: key, in: container, debugDescription: "unknown offer member '\(key.stringValue.prefix(32))'")
        }
        let id = try container.decode(String.self, forKey: AnyKey("id"))
        var eligibility = Eligibility.any
        if let text = try container.decodeIfPresent(String.self, forKey: AnyKey("eligibility")) {
            guard let parsed = Eligibility(rawValue: text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: AnyKey("eligibility"), in: container,
                    debugDescription: "offer \(id.prefix(64)): eligibility must be active, lapsed or any, not '\(text.prefix(32))'")
            }
            eligibility = parsed
        }
        var window: Duration?
        if let text = try container.decodeIfPresent(String.self, forKey: AnyKey("window")) {
            guard let parsed = EnvironmentReader.parseDuration(text) else {
                throw DecodingError.dataCorruptedError(
                    forKey: AnyKey("window"), in: container,
                    debugDescription: "offer \(id.prefix(64)): window must be a duration like 12h or 30d, not '\(text.prefix(32))'")
            }
            window = parsed
        }
        self.init(
            id: id, eligibility: eligibility, perUser: try container.decodeIfPresent(Int.self, forKey: AnyKey("perUser")),
            window: window)
    }

    /// As the catalog gave it: a bare string when it carries no rule, else the object.
    package func encode(to encoder: any Encoder) throws {
        if isBare {
            var single = encoder.singleValueContainer()
            try single.encode(id)
            return
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(eligibility.rawValue, forKey: .eligibility)
        try container.encodeIfPresent(perUser, forKey: .perUser)
        try container.encodeIfPresent(window.map(Self.text), forKey: .window)
    }

    /// A window as the catalog writes it: whole days, hours, minutes or seconds.
    static func text(_ window: Duration) -> String {
        let seconds = window.components.seconds
        for (unit, size) in [("d", Int64(86_400)), ("h", 3600), ("m", 60)] where seconds % size == 0 {
            return "\(seconds / size)\(unit)"
        }
        return "\(seconds)s"
    }

    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
