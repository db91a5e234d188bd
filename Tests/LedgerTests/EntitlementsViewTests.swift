import Foundation
import Ledger
import Testing

@Suite struct EntitlementsViewTests {
    let hash = [
        "coins": "-40",
        "ent:vip:state": "active", "ent:vip:expires": "1000000", "ent:vip:autorenew": "1",
        "ent:no_ads:state": "active",
        "ent:pass:state": "gracePeriod", "ent:pass:expires": "1000000",
    ]

    @Test func readsWhatTheFulfillerWrote() {
        let view = EntitlementsView(hash: hash)
        #expect(view.coins == -40)
        #expect(view.entitlements.map(\.entitlement) == ["no_ads", "pass", "vip"])
        let vip = view.entitlements.first { $0.entitlement == "vip" }
        #expect(vip?.state == "active")
        #expect(vip?.autoRenew == true)
        #expect(vip?.expiresAt == "1970-01-01T00:16:40.000Z")
        #expect(view.entitlements.first { $0.entitlement == "no_ads" }?.expiresAt == nil)
    }

    @Test func anActiveEntitlementPastItsEndIsShownExpired() {
        let before = EntitlementsView(hash: hash, nowMilliseconds: 999_999)
        #expect(before.entitlements.first { $0.entitlement == "vip" }?.state == "active")
        let after = EntitlementsView(hash: hash, nowMilliseconds: 1_000_000)
        #expect(after.entitlements.first { $0.entitlement == "vip" }?.state == "expired")
        // No end: stays active. Grace period: Apple still grants access; the stored state stands.
        #expect(after.entitlements.first { $0.entitlement == "no_ads" }?.state == "active")
        #expect(after.entitlements.first { $0.entitlement == "pass" }?.state == "gracePeriod")
    }

    /// Issue 33: the user's own view adds the sandbox side: its coins (``EntitlementsView/coinsSandbox``, in `coins`)
    /// and its entitlements, labelled, unless the production row of that name already grants access.
    @Test func theUnionWithTheSandboxSideLabelsWhatIsSandboxAndKeepsProductionsRows() throws {
        let production = EntitlementsView(hash: ["coins": "10", "ent:vip:state": "expired", "ent:no_ads:state": "active"])
        let sandbox = ["coins": "100", "ent:vip:state": "active", "ent:no_ads:state": "active", "ent:pass:state": "revoked"]
        let union = production.adding(sandbox: sandbox, nowMilliseconds: nil)
        #expect(union.coins == 110 && union.coinsSandbox == 100)
        #expect(union.entitlements.map(\.entitlement) == ["no_ads", "pass", "vip"])
        let rows = Dictionary(uniqueKeysWithValues: union.entitlements.map { ($0.entitlement, $0) })
        #expect(rows["vip"]?.state == "active" && rows["vip"]?.environment == "sandbox")
        #expect(rows["no_ads"]?.environment == nil, "production's active row stays")
        #expect(rows["pass"]?.state == "revoked" && rows["pass"]?.environment == "sandbox")
        // Nothing on the sandbox side changes nothing, and production rows encode as before (no `environment`).
        #expect(production.adding(sandbox: [:], nowMilliseconds: nil) == production)
        let json = String(decoding: try JSONEncoder().encode(union), as: UTF8.self)
        #expect(json.contains(#""coinsSandbox":100"#) && json.contains(#""environment":"sandbox""#))
        let plain = String(decoding: try JSONEncoder().encode(production), as: UTF8.self)
        #expect(!plain.contains("environment") && !plain.contains("coinsSandbox"))
    }
}
