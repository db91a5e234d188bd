import Core
import Foundation
import Ledger
import Testing

@Suite struct CatalogTests {
    @Test func validCatalogLoadsEveryType() throws {
        let json = """
            {"products": [
              {"productId": "com.example.coins100", "type": "consumable", "coins": 100},
              {"productId": "com.example.vip.month", "type": "autoRenewable", "entitlement": "vip"},
              {"productId": "com.example.noads", "type": "nonConsumable", "entitlement": "no_ads"},
              {"productId": "com.example.pass90", "type": "nonRenewing", "entitlement": "pass", "durationDays": 90}
            ]}
            """
        let catalog = try Catalog(json: Array(json.utf8))
        #expect(catalog.products.count == 4)
        #expect(catalog.product("com.example.coins100")?.coins == 100)
        #expect(catalog.product("com.example.pass90")?.durationDays == 90)
        #expect(catalog.product("com.example.vip.month")?.type == .autoRenewable)
        #expect(catalog.product("com.example.unknown") == nil)
    }

    @Test(arguments: [
        (#"{"products":[{"productId":"a","type":"gift","coins":1}]}"#, "unknown type 'gift'"),
        (#"{"products":[{"productId":"a","type":"consumable","coins":-5}]}"#, "coins must be positive"),
        (#"{"products":[{"productId":"a","type":"consumable"}]}"#, "needs coins"),
        (
            #"{"products":[{"productId":"a","type":"consumable","coins":1},{"productId":"a","type":"consumable","coins":2}]}"#,
            "duplicate productId"
        ),
        (#"{"products":[{"productId":"a","type":"nonConsumable"}]}"#, "needs an entitlement"),
        (#"{"products":[{"productId":"a","type":"autoRenewable","entitlement":"x","period":"P1D"}]}"#, "period must be one of"),
        (#"{"products":[{"productId":"a","type":"nonConsumable","entitlement":"x","period":"P1M"}]}"#, "only autoRenewable"),
        (#"{"products":[{"productId":"a","type":"consumable","coins":1,"commission":"half"}]}"#, "half"),
        (#"{"products":[{"productId":"a","type":"nonRenewing","entitlement":"p"}]}"#, "positive durationDays"),
        (#"{"products":[{"productId":"a","type":"nonConsumable","entitlement":"x","offers":["o"]}]}"#, "only autoRenewable"),
        (#"{"products":[{"productId":"a","type":"autoRenewable","entitlement":"x","offers":["o","o"]}]}"#, "duplicate offer"),
        (#"{"products":[{"productId":"a","type":"autoRenewable","entitlement":"x","offers":[""]}]}"#, "is not 1-64"),
        (#"{"products":[{"productId":"a","type":"autoRenewable","entitlement":"x","offers":["a\u2063b"]}]}"#, "is not 1-64"),
        (
            #"{"products":[{"productId":"a","type":"autoRenewable","entitlement":"x","offers":["o",{"id":"o","perUser":1}]}]}"#,
            "duplicate offer"
        ),
        (
            #"{"products":[{"productId":"a","type":"autoRenewable","entitlement":"x","offers":[{"id":"o","eligibility":"new"}]}]}"#,
            "eligibility must be"
        ),
        (
            #"{"products":[{"productId":"a","type":"autoRenewable","entitlement":"x","offers":[{"id":"o","perUser":0}]}]}"#,
            "perUser must be 1-100"
        ),
        (
            #"{"products":[{"productId":"a","type":"autoRenewable","entitlement":"x","offers":[{"id":"o","perUser":101}]}]}"#,
            "perUser must be 1-100"
        ),
        (
            #"{"products":[{"productId":"a","type":"autoRenewable","entitlement":"x","offers":[{"id":"o","window":"400d"}]}]}"#,
            "window must be 1h to 366d"
        ),
        (
            #"{"products":[{"productId":"a","type":"autoRenewable","entitlement":"x","offers":[{"id":"o","window":"59m"}]}]}"#,
            "window must be 1h to 366d"
        ),
        (
            #"{"products":[{"productId":"a","type":"autoRenewable","entitlement":"x","offers":[{"id":"o","window":"soon"}]}]}"#,
            "window must be a duration"
        ),
        (
            #"{"products":[{"productId":"a","type":"autoRenewable","entitlement":"x","offers":[{"id":"o","perUsr":1}]}]}"#,
            "unknown offer member 'perUsr'"
        ),
        (#"{"products":[{"productId":"a","type":"autoRenewable","entitlement":"x","offers":[{"perUser":1}]}]}"#, "products array"),
        (
            #"{"products":[{"productId":"a","type":"nonConsumable","entitlement":"x","subscriptionGroup":"g"}]}"#,
            "only autoRenewable products have a subscriptionGroup"
        ),
        (
            #"{"products":[{"productId":"a","type":"autoRenewable","entitlement":"x","subscriptionGroup":""}]}"#,
            "subscriptionGroup must be 1-128"
        ),
        (#"{"items":[]}"#, "products array"),
        ("not json", "products array"),
    ])
    func invalidCatalogIsRefusedWithAClearMessage(json: String, expected: String) {
        #expect {
            _ = try Catalog(json: Array(json.utf8))
        } throws: { error in
            guard let error = error as? LedgerError else { return false }
            return error.code == "invalid_catalog" && error.description.contains(expected)
                && error.description.hasPrefix("invalid_catalog: invalid catalog: ")
        }
    }

    @Test func promotionalOffersAreListedPerProductAndServedWithIt() throws {
        let json = """
            {"products": [
              {"productId": "com.example.vip.month", "type": "autoRenewable", "entitlement": "vip", "offers": ["winback50", "loyal.3m"]},
              {"productId": "com.example.vip.year", "type": "autoRenewable", "entitlement": "vip"}
            ]}
            """
        let catalog = try Catalog(json: Array(json.utf8))
        let month = try #require(catalog.product("com.example.vip.month"))
        #expect(month.offers == ["winback50", "loyal.3m"])
        #expect(month.listsOffer("winback50"))
        #expect(!month.listsOffer("WINBACK50"))
        #expect(catalog.product("com.example.vip.year")?.listsOffer("winback50") == false)
        let served = String(decoding: try JSONEncoder().encode(catalog), as: UTF8.self)
        #expect(served.contains(#""offers":["winback50","loyal.3m"]"#))
    }

    /// An `offers` entry may be an object with its rule; a bare string keeps its meaning (anyone, no limit). The served
    /// catalog gives each entry back in the form it was written.
    @Test func offersCarryRulesAndBareStringsKeepTheirMeaning() throws {
        let json = """
            {"products": [
              {"productId": "vip.month", "type": "autoRenewable", "entitlement": "vip", "subscriptionGroup": "premium",
               "offers": ["loyal3m", {"id": "winback50", "eligibility": "lapsed", "perUser": 1, "window": "180d"},
                         {"id": "upsell", "eligibility": "active"}]},
              {"productId": "vipplus.month", "type": "autoRenewable", "entitlement": "vip_plus", "subscriptionGroup": "premium"},
              {"productId": "news.month", "type": "autoRenewable", "entitlement": "news"},
              {"productId": "coins100", "type": "consumable", "coins": 100}
            ]}
            """
        let catalog = try Catalog(json: Array(json.utf8))
        let month = try #require(catalog.product("vip.month"))
        #expect(month.offer("loyal3m") == PromotionalOffer(id: "loyal3m", eligibility: .any, perUser: nil, window: nil))
        #expect(month.offer("loyal3m")?.effectiveWindow == .seconds(365 * 86_400))
        let winback = try #require(month.offer("winback50"))
        #expect(winback.eligibility == .lapsed && winback.perUser == 1 && winback.window == .seconds(180 * 86_400))
        #expect(month.offer("upsell")?.eligibility == .active && month.offer("upsell")?.perUser == nil)
        #expect(month.offer("WINBACK50") == nil && !month.listsOffer("nothing"))
        // The group: named, or the entitlement standing for it; consumables have none.
        #expect(month.group == "premium")
        #expect(catalog.product("news.month")?.group == "news")
        #expect(catalog.product("coins100")?.group == nil)
        #expect(catalog.entitlements(inGroup: "premium") == ["vip", "vip_plus"])
        #expect(catalog.entitlements(inGroup: "news") == ["news"])
        #expect(catalog.entitlements(inGroup: "vip").isEmpty)

        let served = String(decoding: try JSONEncoder().encode(catalog), as: UTF8.self)
        #expect(served.contains(#""loyal3m""#))
        #expect(served.contains(#""subscriptionGroup":"premium""#))
        let again = try Catalog(json: Array(served.utf8))
        #expect(again == catalog)
        #expect(again.product("vip.month")?.offer("winback50")?.window == .seconds(180 * 86_400))
    }

    @Test func missingFileNamesThePath() {
        #expect(throws: LedgerError.invalidCatalog("cannot read /nonexistent/catalog.json")) {
            _ = try Catalog(contentsOf: "/nonexistent/catalog.json")
        }
    }
}
