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
        (#"{"products":[{"productId":"a","type":"nonRenewing","entitlement":"p"}]}"#, "positive durationDays"),
        (#"{"products":[{"productId":"a","type":"nonConsumable","entitlement":"x","offers":["o"]}]}"#, "only autoRenewable"),
        (#"{"products":[{"productId":"a","type":"autoRenewable","entitlement":"x","offers":["o","o"]}]}"#, "duplicate offer"),
        (#"{"products":[{"productId":"a","type":"autoRenewable","entitlement":"x","offers":[""]}]}"#, "is not 1-64"),
        (#"{"products":[{"productId":"a","type":"autoRenewable","entitlement":"x","offers":["a\u2063b"]}]}"#, "is not 1-64"),
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

    @Test func missingFileNamesThePath() {
        #expect(throws: LedgerError.invalidCatalog("cannot read /nonexistent/catalog.json")) {
            _ = try Catalog(contentsOf: "/nonexistent/catalog.json")
        }
    }
}
