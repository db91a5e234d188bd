import Foundation

/// A user's balances and entitlements as `GET /v1/users/{userId}/entitlements` shows them:
/// `{"coins": 100, "entitlements": [{"entitlement", "state", "expiresAt", "autoRenew"}]}`.
///
/// Read from the account hash `tg:{u:<userId>}:account` (``Keys/account(user:)``) that the fulfiller writes:
/// - `coins` — the coin balance, a decimal integer (may be negative); absent means 0
/// - `ent:<entitlement>:state` — one of `active`, `gracePeriod`, `billingRetry`, `expired`, `revoked`;
///   an entitlement is listed when this field exists
/// - `ent:<entitlement>:expires` — when it ends, milliseconds since 1970; absent = no end (non-consumables)
/// - `ent:<entitlement>:autorenew` — `1` when an auto-renewable subscription will renew, else `0` (absent = 0)
///
/// Entitlement names are the catalog's `entitlement` values; they must not contain `:`.
package struct EntitlementsView: Sendable, Hashable, Codable {
    /// One entitlement's current state.
    package struct Entitlement: Sendable, Hashable, Codable {
        package var entitlement: String
        package var state: String
        /// ISO 8601 (UTC, milliseconds), or nil when it does not end.
        package var expiresAt: String?
        package var autoRenew: Bool

        package init(entitlement: String, state: String, expiresAt: String?, autoRenew: Bool) {
            self.entitlement = entitlement
            self.state = state
            self.expiresAt = expiresAt
            self.autoRenew = autoRenew
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(entitlement, forKey: .entitlement)
            try container.encode(state, forKey: .state)
            try container.encode(expiresAt, forKey: .expiresAt)  // explicit null when it does not end
            try container.encode(autoRenew, forKey: .autoRenew)
        }
    }

    /// The states the fulfiller writes in `ent:<name>:state`.
    package static let knownStates: Set<String> = ["active", "gracePeriod", "billingRetry", "expired", "revoked"]

    package var coins: Int64
    package var entitlements: [Entitlement]

    package init(coins: Int64, entitlements: [Entitlement]) {
        self.coins = coins
        self.entitlements = entitlements
    }

    /// Decodes `HGETALL` of the account hash; an empty hash is a user with 0 coins and no entitlements.
    /// Entitlements are sorted by name; unreadable numbers are treated as absent.
    ///
    /// The stored state is the one the last event left. With `nowMilliseconds`, an `active` entitlement whose
    /// `expires` has passed is shown as `expired`: when Apple's renewal notification is missing, granting
    /// access past the paid period would be wrong, and the next event (or a reconciliation) corrects it.
    package init(hash: [String: String], nowMilliseconds: Int64? = nil) {
        coins = hash[Field.coins].flatMap { Int64($0) } ?? 0
        var list: [Entitlement] = []
        for (field, state) in hash where field.hasPrefix("ent:") && field.hasSuffix(":state") {
            let name = String(field.dropFirst(4).dropLast(6))
            guard !name.isEmpty else { continue }
            let expiresMilliseconds = hash[Field.expires(name)].flatMap { Int64($0) }
            var state = state
            if state == "active", let now = nowMilliseconds, let end = expiresMilliseconds, end <= now {
                state = "expired"
            }
            list.append(
                Entitlement(
                    entitlement: name, state: state, expiresAt: expiresMilliseconds.map(Self.iso8601),
                    autoRenew: hash[Field.autoRenew(name)] == "1"))
        }
        entitlements = list.sorted { $0.entitlement < $1.entitlement }
    }

    /// Milliseconds since 1970 as ISO 8601 UTC with milliseconds, e.g. `2026-11-22T05:57:36.000Z`.
    static func iso8601(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    /// The account hash's field names.
    package enum Field {
        package static let coins = "coins"
        package static func state(_ entitlement: String) -> String { "ent:\(entitlement):state" }
        package static func expires(_ entitlement: String) -> String { "ent:\(entitlement):expires" }
        package static func autoRenew(_ entitlement: String) -> String { "ent:\(entitlement):autorenew" }
    }
}
