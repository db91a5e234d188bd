import Core
package import Ledger

/// A user's `users` row (docs/EXPORT.md): coins and entitlements as the ledger's account and grants hold them at
/// the snapshot's `seq`.
package struct UserRow: Sendable, Equatable {
    package var userId: String
    package var coins: Int64
    package var coinsGranted: Int64
    package var coinsSpent: Int64
    /// `[{"entitlement","state","expiresAt","source"}]`, sorted by entitlement.
    package var entitlements: String
    package var seq: Int64

    package init(userId: String, coins: Int64, coinsGranted: Int64, coinsSpent: Int64, entitlements: String, seq: Int64) {
        self.userId = userId
        self.coins = coins
        self.coinsGranted = coinsGranted
        self.coinsSpent = coinsSpent
        self.entitlements = entitlements
        self.seq = seq
    }

    /// The row of the account hash `account` with its grants hash `grants` (every grant listed counts: the ledger
    /// removes a grant when it ends, with its event).
    package init(userId: String, account: [String: String], grants: [String: String], seq: Int64) {
        let view = EntitlementsView(hash: account, grants: LedgerGrants.parse(values: grants.values.map { Array($0.utf8) }))
        self.init(
            userId: userId, coins: view.coins, coinsGranted: view.coinsGranted,
            coinsSpent: account[CoinSpend.Field.spent].flatMap { Int64($0) } ?? 0,
            entitlements: Self.json(view.entitlements), seq: seq)
    }

    /// The entitlements column's JSON.
    package static func json(_ entitlements: [EntitlementsView.Entitlement]) -> String {
        var writer = JSONWriter(capacity: 64 + entitlements.count * 96)
        writer.beginArray()
        for entitlement in entitlements {
            writer.beginObject()
            writer.member("entitlement", entitlement.entitlement)
            writer.member("state", entitlement.state)
            writer.member("expiresAt", entitlement.expiresAt)
            writer.member("source", entitlement.source)
            writer.endObject()
        }
        writer.endArray()
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}

extension TransactionRecord {
    /// `PURCHASED` or `FAMILY_SHARED`, as Apple's `inAppOwnershipType` and the events name it.
    package var ownershipType: String { familyShared ? "FAMILY_SHARED" : "PURCHASED" }
}
