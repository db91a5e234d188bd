import AppStore
import Core
import Foundation
import TestSupport
import Testing

/// Apple's signed notification and renewal info read by hand read what `JSONDecoder` reads: on every one in the
/// vectors (Apple's real ones and our test-signed ones of the same shape; renewal info top level and nested in
/// notifications), and on payloads with every member of every part set, where a misspelt key would leave one nil.
struct HandDecodedNotificationTests {
    /// The payload JSON of every vector whose payload has `key`, and of every nested JWS under `data.<nested>`.
    static func realPayloads(having key: String, nested: String?) throws -> [Data] {
        var found: [Data] = []
        for (_, jws) in try Vectors.allJWS() {
            guard let json = HandDecodedPayloadTests.payload(jws),
                let object = try JSONSerialization.jsonObject(with: json) as? [String: Any]
            else { continue }
            if object[key] != nil { found.append(json) }
            if let nested, let data = object["data"] as? [String: Any], let inner = data[nested] as? String,
                let innerJSON = HandDecodedPayloadTests.payload(inner)
            {
                found.append(innerJSON)
            }
        }
        return found
    }

    static func hand<T: HandDecodedPayload>(_ type: T.Type, _ json: Data) throws -> T {
        try T(json: JSONFields(JSONReader.parse(Array(json))))
    }

    @Test func readsEveryRealNotificationAsJSONDecoderDoes() throws {
        let payloads = try Self.realPayloads(having: "notificationType", nested: nil)
        #expect(payloads.count >= 13, "the vectors hold \(payloads.count) notifications")
        var parts = Set<String>()
        for json in payloads {
            let reference = try JSONDecoder().decode(ResponseBodyV2DecodedPayload.self, from: json)
            let hand = try Self.hand(ResponseBodyV2DecodedPayload.self, json)
            #expect(hand == reference, "\(String(decoding: json, as: UTF8.self).prefix(200))")
            #expect(hand.notificationType != nil)
            parts.formUnion(hand.parts)
            if hand.data?.signedTransactionInfo != nil { parts.insert("signedTransactionInfo") }
            if hand.data?.signedRenewalInfo != nil { parts.insert("signedRenewalInfo") }
        }
        #expect(parts.isSuperset(of: ["data", "signedTransactionInfo", "signedRenewalInfo"]), "\(parts)")
    }

    @Test func readsEveryRealRenewalInfoAsJSONDecoderDoes() throws {
        let payloads = try Self.realPayloads(having: "autoRenewProductId", nested: "signedRenewalInfo")
        #expect(payloads.count >= 8, "the vectors hold \(payloads.count) renewal infos")
        for json in payloads {
            let reference = try JSONDecoder().decode(JWSRenewalInfoDecodedPayload.self, from: json)
            let hand = try Self.hand(JWSRenewalInfoDecodedPayload.self, json)
            #expect(hand == reference, "\(String(decoding: json, as: UTF8.self).prefix(200))")
            #expect(hand.originalTransactionId != nil)
        }
    }

    @Test func readsEveryMemberOfAFullyPopulatedRenewalInfo() throws {
        var full = JWSRenewalInfoDecodedPayload(
            originalTransactionId: "1", autoRenewProductId: "a", productId: "p", autoRenewStatus: .on,
            expirationIntent: ExpirationIntent(rawValue: 2), isInBillingRetryPeriod: true, gracePeriodExpiresDate: 3,
            signedDate: 4, environment: .sandbox, renewalDate: 5)
        full.priceIncreaseStatus = PriceIncreaseStatus(rawValue: 1)
        full.offerType = OfferType(rawValue: 3)
        full.offerIdentifier = "o"
        full.offerDiscountType = OfferDiscountType(rawValue: "FREE_TRIAL")
        full.offerPeriod = "P1W"
        full.recentSubscriptionStartDate = 6
        full.currency = "EUR"
        full.renewalPrice = 4990
        full.eligibleWinBackOfferIds = ["w1", "w2"]
        full.appAccountToken = "t"
        full.appTransactionId = "at"
        full.renewalBillingPlanType = "MONTHLY"
        full.commitmentInfo = .object(["n": .integer(12)])
        full.advancedCommerceInfo = .array([.string("x")])
        let json = try JSONEncoder().encode(full)
        let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
        #expect(object.count == 24)
        #expect(try Self.hand(JWSRenewalInfoDecodedPayload.self, json) == full)
        let lenient = Data(#"{"autoRenewStatus":7,"expirationIntent":99,"priceIncreaseStatus":5,"eligibleWinBackOfferIds":null}"#.utf8)
        #expect(
            try Self.hand(JWSRenewalInfoDecodedPayload.self, lenient)
                == (try JSONDecoder().decode(JWSRenewalInfoDecodedPayload.self, from: lenient)))
        let mistyped = [
            #"{"autoRenewStatus":"1"}"#, #"{"isInBillingRetryPeriod":0}"#, #"{"eligibleWinBackOfferIds":"w"}"#,
            #"{"eligibleWinBackOfferIds":[1]}"#, #"{"renewalPrice":1.5}"#,
        ]
        for text in mistyped {
            #expect(throws: (any Error).self) { try JSONDecoder().decode(JWSRenewalInfoDecodedPayload.self, from: Data(text.utf8)) }
            #expect(throws: JSONError.self) { try Self.hand(JWSRenewalInfoDecodedPayload.self, Data(text.utf8)) }
        }
    }

    @Test func readsEveryMemberOfEachPartOfAFullyPopulatedNotification() throws {
        let data = NotificationData(
            appAppleId: 1, bundleId: "b", bundleVersion: "2", environment: .production, signedTransactionInfo: "t.t.t",
            signedRenewalInfo: "r.r.r", status: SubscriptionStatus(rawValue: 1),
            consumptionRequestReason: ConsumptionRequestReason(rawValue: "UNINTENDED_PURCHASE"))
        var summary = NotificationSummary(environment: .sandbox, appAppleId: 3, bundleId: "b")
        summary.requestIdentifier = "r"
        summary.productId = "p"
        summary.storefrontCountryCodes = ["USA", "FRA"]
        summary.failedCount = 4
        summary.succeededCount = 5
        let token = ExternalPurchaseToken(externalPurchaseId: "SANDBOX_1", tokenCreationDate: 6, appAppleId: 7, bundleId: "b")
        let app = AppData(appAppleId: 8, bundleId: "b", environment: .sandbox, signedAppTransactionInfo: "a.a.a")
        // One notification per part (Apple sends exactly one), each with every member of the envelope set.
        let notifications = [
            ResponseBodyV2DecodedPayload(data: data), ResponseBodyV2DecodedPayload(summary: summary),
            ResponseBodyV2DecodedPayload(externalPurchaseToken: token), ResponseBodyV2DecodedPayload(appData: app),
        ].map { part in
            var notification = part
            notification.notificationType = NotificationTypeV2(rawValue: "DID_RENEW")
            notification.subtype = NotificationSubtype(rawValue: "BILLING_RECOVERY")
            notification.notificationUUID = "u"
            notification.signedDate = 9
            return notification
        }
        let memberCounts: [String: Int] = ["data": 8, "summary": 8, "externalPurchaseToken": 4, "appData": 4]
        for notification in notifications {
            let json = try JSONEncoder().encode(notification)
            let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
            #expect(object.count == 6)
            let part = try #require(notification.parts.first)
            #expect((object[part] as? [String: Any])?.count == memberCounts[part])
            #expect(try Self.hand(ResponseBodyV2DecodedPayload.self, json) == notification)
        }
        let mistyped = [
            #"{"notificationType":1}"#, #"{"data":"d"}"#, #"{"data":{"appAppleId":"1"}}"#,
            #"{"summary":{"storefrontCountryCodes":["USA",2]}}"#, #"{"externalPurchaseToken":{"tokenCreationDate":true}}"#,
            #"{"appData":{"environment":3}}"#, #"{"signedDate":"9"}"#,
        ]
        for text in mistyped {
            #expect(throws: (any Error).self) { try JSONDecoder().decode(ResponseBodyV2DecodedPayload.self, from: Data(text.utf8)) }
            #expect(throws: JSONError.self) { try Self.hand(ResponseBodyV2DecodedPayload.self, Data(text.utf8)) }
        }
    }
}
