import AppStore
import Foundation
import Testing

/// Apple's payload models decode leniently: unknown fields are ignored and unknown enum values survive
/// as `.unknown(raw)`.
@Suite struct ModelsDecodingTests {
    @Test func unknownEnumValuesAndExtraFieldsDecode() throws {
        let json = Data(
            """
            {"notificationType":"SOMETHING_NEW_IN_2030","subtype":"ALSO_NEW","notificationUUID":"u-1",
             "version":"2.0","signedDate":1700000000000,"brandNewTopLevel":{"x":[1,2]},
             "data":{"environment":"Staging","bundleId":"com.example","appAppleId":42,"status":9,
                     "consumptionRequestReason":"NEW_REASON","unknownInner":true}}
            """.utf8)
        let payload = try JSONDecoder().decode(ResponseBodyV2DecodedPayload.self, from: json)
        #expect(payload.notificationType == .unknown("SOMETHING_NEW_IN_2030"))
        #expect(payload.subtype == .unknown("ALSO_NEW"))
        #expect(payload.data?.environment == .unknown("Staging"))
        #expect(payload.data?.status == .unknown(9))
        #expect(payload.data?.consumptionRequestReason == .unknown("NEW_REASON"))
        #expect(payload.data?.appAppleId == 42)
    }

    @Test func knownEnumValuesMapToCamelCaseCases() throws {
        let json = Data(
            """
            {"transactionId":"1","type":"Auto-Renewable Subscription","inAppOwnershipType":"FAMILY_SHARED",
             "offerType":4,"offerDiscountType":"FREE_TRIAL","revocationReason":1,"transactionReason":"RENEWAL",
             "environment":"Production","price":1990,"expiresDate":1759388947000,"isUpgraded":true}
            """.utf8)
        let transaction = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: json)
        #expect(transaction.type == .autoRenewableSubscription)
        #expect(transaction.inAppOwnershipType == .familyShared)
        #expect(transaction.offerType == .winBackOffer)
        #expect(transaction.offerDiscountType == .freeTrial)
        #expect(transaction.revocationReason == .appIssue)
        #expect(transaction.transactionReason == .renewal)
        #expect(transaction.environment == .production)
        #expect(transaction.expiresDate == 1_759_388_947_000)
        #expect(transaction.isUpgraded == true)
    }

    @Test func unknownValuesEncodeBackUnchanged() throws {
        let renewal = JWSRenewalInfoDecodedPayload(
            autoRenewStatus: .unknown(7), expirationIntent: .unknown(42), environment: .unknown("Future")
        )
        let object = try #require(
            try JSONSerialization.jsonObject(with: JSONEncoder().encode(renewal)) as? [String: Any]
        )
        #expect(object["autoRenewStatus"] as? Int == 7)
        #expect(object["expirationIntent"] as? Int == 42)
        #expect(object["environment"] as? String == "Future")
        #expect(NotificationTypeV2(rawValue: "DID_RENEW") == .didRenew)
        #expect(NotificationTypeV2.oneTimeCharge.rawValue == "ONE_TIME_CHARGE")
        #expect(NotificationSubtype(rawValue: "AUTO_RENEW_DISABLED") == .autoRenewDisabled)
    }

    @Test func appTransactionDecodes() throws {
        let json = Data(
            """
            {"receiptType":"Sandbox","appAppleId":1,"bundleId":"com.example","applicationVersion":"3",
             "originalPlatform":"visionOS","signedDate":1700000000000,"somethingElse":1}
            """.utf8)
        let app = try JSONDecoder().decode(AppTransaction.self, from: json)
        #expect(app.receiptType == .sandbox)
        #expect(app.originalPlatform == .visionOS)
        #expect(app.signedDate == 1_700_000_000_000)
    }

    @Test func externalPurchaseTokenEnvironmentFollowsItsId() {
        #expect(ExternalPurchaseToken(externalPurchaseId: "SANDBOX_abc").environment == .sandbox)
        #expect(ExternalPurchaseToken(externalPurchaseId: "abc").environment == .production)
    }
}
