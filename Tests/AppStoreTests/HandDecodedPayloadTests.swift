import AppStore
import Core
import Foundation
import TestSupport
import Testing

/// Apple's signed transaction read by hand reads what `JSONDecoder` reads: on every transaction in the vectors
/// (Apple's real ones and our test-signed ones; top level, and nested in notifications), and on a payload with every
/// member set, where a misspelt key would leave one nil.
struct HandDecodedPayloadTests {
    /// The payload JSON of a compact JWS.
    static func payload(_ jws: String) -> Data? {
        let parts = jws.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var text = String(parts[1]).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text)
    }

    /// Every transaction payload in the vectors.
    static func realTransactions() throws -> [Data] {
        var found: [Data] = []
        for (_, jws) in try Vectors.allJWS() {
            guard let json = payload(jws), let object = try JSONSerialization.jsonObject(with: json) as? [String: Any] else {
                continue
            }
            if object["transactionId"] != nil { found.append(json) }
            if let data = object["data"] as? [String: Any], let nested = data["signedTransactionInfo"] as? String,
                let inner = payload(nested)
            {
                found.append(inner)
            }
        }
        return found
    }

    @Test func readsEveryRealTransactionAsJSONDecoderDoes() throws {
        let payloads = try Self.realTransactions()
        #expect(payloads.count >= 20, "the vectors hold \(payloads.count) transactions")
        for json in payloads {
            let reference = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: json)
            let hand = try JWSTransactionDecodedPayload(json: JSONFields(JSONReader.parse(Array(json))))
            #expect(hand == reference, "\(String(decoding: json, as: UTF8.self).prefix(200))")
            #expect(hand.transactionId != nil)
        }
    }

    @Test func readsEveryMemberOfAFullyPopulatedTransaction() throws {
        var full = JWSTransactionDecodedPayload(
            originalTransactionId: "1", transactionId: "2", webOrderLineItemId: "3", bundleId: "b", productId: "p",
            subscriptionGroupIdentifier: "g", purchaseDate: 4, originalPurchaseDate: 5, expiresDate: 6, quantity: 7,
            type: ProductType(rawValue: "Auto-Renewable Subscription"), appAccountToken: "t",
            inAppOwnershipType: InAppOwnershipType(rawValue: "FAMILY_SHARED"), signedDate: 8,
            revocationReason: RevocationReason(rawValue: 1), revocationDate: 9, isUpgraded: true,
            offerType: OfferType(rawValue: 2), offerIdentifier: "o", environment: AppStoreEnvironment(rawValue: "Sandbox"),
            storefront: "USA", storefrontId: "143441", transactionReason: TransactionReason(rawValue: "RENEWAL"),
            currency: "USD", price: 990, appTransactionId: "a")
        full.revocationType = RevocationType(rawValue: "REFUND_PRORATED")
        full.revocationPercentage = 50_000
        full.offerDiscountType = OfferDiscountType(rawValue: "PAY_AS_YOU_GO")
        full.offerPeriod = "P1M"
        full.previousOriginalTransactionId = "0"
        full.billingPlanType = "MONTHLY"
        full.commitmentInfo = .object(["term": .string("P1Y"), "n": .integer(3)])
        full.advancedCommerceInfo = .array([.bool(true), .null])
        let json = try JSONEncoder().encode(full)
        // Every stored member is in the document (nothing nil), so a key the hand reader misspells fails below.
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(object.count == 34)
        let hand = try JWSTransactionDecodedPayload(json: JSONFields(JSONReader.parse(Array(json))))
        #expect(hand == full)
        #expect(hand == (try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: json)))
        // Unknown enum values stay lenient; a mistyped member is refused by both.
        let unknown = Array(#"{"type":"Future Type","offerType":99,"environment":"Staging"}"#.utf8)
        let lenient = try JWSTransactionDecodedPayload(json: JSONFields(JSONReader.parse(unknown)))
        #expect(lenient == (try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: Data(unknown))))
        for mistyped in [#"{"purchaseDate":"1"}"#, #"{"quantity":1.5}"#, #"{"isUpgraded":1}"#, #"{"transactionId":2}"#] {
            #expect(throws: (any Error).self) { try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: Data(mistyped.utf8)) }
            #expect(throws: JSONError.self) { try JWSTransactionDecodedPayload(json: JSONFields(JSONReader.parse(Array(mistyped.utf8)))) }
        }
    }
}
