import Core
import Foundation

/// A user's balances and entitlements as `GET /v1/users/{userId}/entitlements` shows them:
/// `{"coins": 100, "entitlements": [{"entitlement", "state", "expiresAt", "autoRenew", "source"}]}`, with
/// `coinsGranted` when granted coins are unspent, and labelled grants (``LedgerGrants``) merged in.
///
/// Read from the account hash `tg:{u:<userId>}:account` (``Keys/account(user:)``) that the fulfiller writes:
/// - `coins` — the coin balance, a decimal integer (may be negative); absent means 0
/// - `ent:<entitlement>:state` — one of `active`, `gracePeriod`, `billingRetry`, `expired`, `revoked`;
///   an entitlement is listed when this field exists
/// - `ent:<entitlement>:expires` — when it ends, milliseconds since 1970; absent = no end (non-consumables)
/// - `ent:<entitlement>:autorenew` — `1` when an auto-renewable subscription will renew, else `0` (absent = 0)
///
/// - `coins.granted` — granted coins still unspent (part of `coins`; ``LedgerGrants``)
///
/// Grants (``Keys/grants(user:)``) are merged at read time, never written into these fields (they are Apple's: a
/// refund's recompute rewrites them): an entitlement only granted is shown `active` until the grant's `until`, with
/// `source: grant` and the grant's label (`grant`: `grantId`, `by`, `reason`, `until`); one both bought and granted
/// is one row whose end is the later of the two, `source` the one that ends later (Apple's on a tie or with no end),
/// and `sources: ["apple", "grant"]`. A grant whose `until` has passed grants nothing, even before the fulfiller's
/// sweep removes it.
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
        /// `apple` or `grant`: what grants it (the later end when both do).
        package var source: String
        /// `["apple", "grant"]` when both grant it, else nil.
        package var sources: [String]?
        /// The grant that grants it (the one ending last), when one does.
        package var grant: GrantLabel?
        /// `sandbox` when the row is the user's sandbox side's (``LedgerSide``: a production deployment's App Review or
        /// TestFlight purchase); absent for the deployment's own environment.
        package var environment: String?

        package init(
            entitlement: String, state: String, expiresAt: String?, autoRenew: Bool, source: String = Source.apple,
            sources: [String]? = nil, grant: GrantLabel? = nil
        ) {
            self.entitlement = entitlement
            self.state = state
            self.expiresAt = expiresAt
            self.autoRenew = autoRenew
            self.source = source
            self.sources = sources
            self.grant = grant
        }

        private enum CodingKeys: String, CodingKey {
            case entitlement, state, expiresAt, autoRenew, source, sources, grant, environment
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            entitlement = try container.decode(String.self, forKey: .entitlement)
            state = try container.decode(String.self, forKey: .state)
            expiresAt = try container.decodeIfPresent(String.self, forKey: .expiresAt)
            autoRenew = try container.decode(Bool.self, forKey: .autoRenew)
            source = try container.decodeIfPresent(String.self, forKey: .source) ?? Source.apple
            sources = try container.decodeIfPresent([String].self, forKey: .sources)
            grant = try container.decodeIfPresent(GrantLabel.self, forKey: .grant)
            environment = try container.decodeIfPresent(String.self, forKey: .environment)
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(entitlement, forKey: .entitlement)
            try container.encode(state, forKey: .state)
            try container.encode(expiresAt, forKey: .expiresAt)  // explicit null when it does not end
            try container.encode(autoRenew, forKey: .autoRenew)
            try container.encode(source, forKey: .source)
            try container.encodeIfPresent(sources, forKey: .sources)
            try container.encodeIfPresent(grant, forKey: .grant)
            try container.encodeIfPresent(environment, forKey: .environment)
        }
    }

    /// The values of ``Entitlement/source``.
    package enum Source {
        package static let apple = "apple"
        package static let grant = "grant"
    }

    /// Who granted an entitlement, why and until when (``LedgerGrants/Grant``).
    package struct GrantLabel: Sendable, Hashable, Codable {
        package var grantId: String
        package var by: String
        package var reason: String
        /// ISO 8601 (UTC, milliseconds).
        package var until: String
    }

    /// The states the fulfiller writes in `ent:<name>:state`.
    package static let knownStates: Set<String> = ["active", "gracePeriod", "billingRetry", "expired", "revoked"]

    package var coins: Int64
    /// Granted coins still unspent (part of ``coins``); written only when not 0.
    package var coinsGranted: Int64 = 0
    /// The part of ``coins`` on the user's sandbox side (``adding(sandbox:nowMilliseconds:)``); written only when not 0.
    package var coinsSandbox: Int64 = 0
    package var entitlements: [Entitlement]
    /// The user's sandbox side on its own (``reading(sandbox:merged:nowMilliseconds:)``): its coins and entitlements
    /// (rows labelled `environment: sandbox`), for an app whose own `AppTransaction.environment` says sandbox to show.
    package var sandbox: Side?
    /// Whether the top level counts the sandbox side too (a tester, or `TOLLGATE_SANDBOX_VALUE=everyone`): an app
    /// must not add ``sandbox`` again. Nil on a view read without one.
    package var sandboxMerged: Bool?

    /// One side's coins and entitlements: the ``sandbox`` block.
    package struct Side: Sendable, Hashable, Codable {
        package var coins: Int64
        package var entitlements: [Entitlement]
    }

    package init(coins: Int64, coinsGranted: Int64 = 0, entitlements: [Entitlement]) {
        self.coins = coins
        self.coinsGranted = coinsGranted
        self.entitlements = entitlements
    }

    private enum ViewKeys: String, CodingKey { case coins, coinsGranted, coinsSandbox, entitlements, sandbox, sandboxMerged }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: ViewKeys.self)
        coins = try container.decode(Int64.self, forKey: .coins)
        coinsGranted = try container.decodeIfPresent(Int64.self, forKey: .coinsGranted) ?? 0
        coinsSandbox = try container.decodeIfPresent(Int64.self, forKey: .coinsSandbox) ?? 0
        entitlements = try container.decode([Entitlement].self, forKey: .entitlements)
        sandbox = try container.decodeIfPresent(Side.self, forKey: .sandbox)
        sandboxMerged = try container.decodeIfPresent(Bool.self, forKey: .sandboxMerged)
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: ViewKeys.self)
        try container.encode(coins, forKey: .coins)
        if coinsGranted != 0 { try container.encode(coinsGranted, forKey: .coinsGranted) }
        if coinsSandbox != 0 { try container.encode(coinsSandbox, forKey: .coinsSandbox) }
        try container.encode(entitlements, forKey: .entitlements)
        try container.encodeIfPresent(sandbox, forKey: .sandbox)
        try container.encodeIfPresent(sandboxMerged, forKey: .sandboxMerged)
    }

    /// This view (the primary side's) as the buyer's entitlements read answers it (issue 42): the sandbox side always
    /// in its own ``sandbox`` block, and added to the top level (``adding(sandbox:nowMilliseconds:)``) only when
    /// `merged` — a tester, or `TOLLGATE_SANDBOX_VALUE=everyone`. Otherwise the top level is production alone, so that
    /// free TestFlight purchases never unlock the App Store build; an app merges the block itself where its own
    /// `AppTransaction.environment` says sandbox.
    package func reading(sandbox hash: [String: String], merged: Bool, nowMilliseconds: Int64?) -> EntitlementsView {
        var view = merged ? adding(sandbox: hash, nowMilliseconds: nowMilliseconds) : self
        let side = EntitlementsView(hash: hash, nowMilliseconds: nowMilliseconds)
        view.sandbox = Side(
            coins: side.coins,
            entitlements: side.entitlements.map { row in
                var row = row
                row.environment = "sandbox"
                return row
            })
        view.sandboxMerged = merged
        return view
    }

    /// This view (the primary side's) with the user's sandbox side (its account hash) added, as the user's own app sees
    /// it: `coins` is both sides' balance (``coinsSandbox`` the sandbox part, which spends first), and a sandbox
    /// entitlement is listed, labelled `environment: sandbox`, unless the primary side's row of that name is active or
    /// in its grace period. An empty sandbox hash changes nothing.
    package func adding(sandbox hash: [String: String], nowMilliseconds: Int64?) -> EntitlementsView {
        guard !hash.isEmpty else { return self }
        var union = self
        let sandbox = EntitlementsView(hash: hash, nowMilliseconds: nowMilliseconds)
        union.coins += sandbox.coins
        union.coinsSandbox = sandbox.coins
        for var row in sandbox.entitlements {
            row.environment = "sandbox"
            guard let index = union.entitlements.firstIndex(where: { $0.entitlement == row.entitlement }) else {
                union.entitlements.append(row)
                continue
            }
            let current = union.entitlements[index].state
            if current != "active" && current != "gracePeriod" && (row.state == "active" || row.state == "gracePeriod") {
                union.entitlements[index] = row
            }
        }
        union.entitlements.sort { $0.entitlement < $1.entitlement }
        return union
    }

    /// Decodes `HGETALL` of the account hash; an empty hash is a user with 0 coins and no entitlements.
    /// Entitlements are sorted by name; unreadable numbers are treated as absent.
    ///
    /// The stored state is the one the last event left. With `nowMilliseconds`, an `active` entitlement whose
    /// `expires` has passed is shown as `expired`: when Apple's renewal notification is missing, granting
    /// access past the paid period would be wrong, and the next event (or a reconciliation) corrects it.
    ///
    /// `grants` (the user's grants hash, ``LedgerGrants/list(user:keys:on:)``) are merged in as the type describes;
    /// without `nowMilliseconds` every listed grant counts as active.
    package init(hash: [String: String], grants: [LedgerGrants.Grant] = [], nowMilliseconds: Int64? = nil) {
        coins = hash[Field.coins].flatMap { Int64($0) } ?? 0
        coinsGranted = hash[Field.coinsGranted].flatMap { Int64($0) } ?? 0
        var list: [Entitlement] = []
        var ends: [String: Int64] = [:]
        for (field, state) in hash where field.hasPrefix("ent:") && field.hasSuffix(":state") {
            let name = String(field.dropFirst(4).dropLast(6))
            guard !name.isEmpty else { continue }
            let expiresMilliseconds = hash[Field.expires(name)].flatMap { Int64($0) }
            var state = state
            if state == "active", let now = nowMilliseconds, let end = expiresMilliseconds, end <= now {
                state = "expired"
            }
            ends[name] = expiresMilliseconds
            list.append(
                Entitlement(
                    entitlement: name, state: state, expiresAt: expiresMilliseconds.map(Self.iso8601),
                    autoRenew: hash[Field.autoRenew(name)] == "1"))
        }
        entitlements = Self.merge(list, ends: ends, grants: grants, now: nowMilliseconds)
            .sorted { $0.entitlement < $1.entitlement }
    }

    /// Apple's rows with the active entitlement grants merged in (the type's rules); `ends` Apple's ends in ms.
    private static func merge(
        _ apple: [Entitlement], ends: [String: Int64], grants: [LedgerGrants.Grant], now: Int64?
    ) -> [Entitlement] {
        var latest: [String: (grant: LedgerGrants.Grant, until: Int64)] = [:]
        for grant in grants where now.map(grant.isActive(at:)) ?? true {
            guard let name = grant.entitlement, let until = grant.until else { continue }
            if let current = latest[name], current.until >= until { continue }
            latest[name] = (grant, until)
        }
        guard !latest.isEmpty else { return apple }
        var rows = apple
        for (name, (grant, until)) in latest {
            let label = GrantLabel(grantId: grant.grantId, by: grant.by, reason: grant.reason, until: iso8601(until))
            let granted = Entitlement(
                entitlement: name, state: "active", expiresAt: iso8601(until), autoRenew: false, source: Source.grant,
                grant: label)
            guard let index = rows.firstIndex(where: { $0.entitlement == name }) else {
                rows.append(granted)
                continue
            }
            var row = rows[index]
            guard row.state == "active" || row.state == "gracePeriod" else {
                rows[index] = granted
                continue
            }
            row.sources = [Source.apple, Source.grant]
            row.grant = label
            if let end = ends[name], end < until {
                row.state = "active"
                row.expiresAt = iso8601(until)
                row.source = Source.grant
            }
            rows[index] = row
        }
        return rows
    }

    /// Milliseconds since 1970 as ISO 8601 UTC with milliseconds, e.g. `2026-11-22T05:57:36.000Z`.
    package static func iso8601(_ milliseconds: Int64) -> String { UTCTime.iso8601(milliseconds: milliseconds) }

    /// The account hash's field names.
    package enum Field {
        package static let coins = "coins"
        /// Granted coins still unspent (``LedgerGrants``).
        package static let coinsGranted = "coins.granted"
        package static func state(_ entitlement: String) -> String { "ent:\(entitlement):state" }
        package static func expires(_ entitlement: String) -> String { "ent:\(entitlement):expires" }
        package static func autoRenew(_ entitlement: String) -> String { "ent:\(entitlement):autorenew" }
    }
}
