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

    @Test func missingFileNamesThePath() {
        #expect(throws: LedgerError.invalidCatalog("cannot read /nonexistent/catalog.json")) {
            _ = try Catalog(contentsOf: "/nonexistent/catalog.json")
        }
    }
}
