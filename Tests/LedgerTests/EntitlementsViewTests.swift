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
}
