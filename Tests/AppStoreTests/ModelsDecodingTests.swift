import AppStore
import Core
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

    /// Apple's `offerType` 3 is an offer code (`OFFER_CODE`), for any product type now.
    @Test func offerType3IsAnOfferCode() throws {
        let transaction = try JSONDecoder().decode(
            JWSTransactionDecodedPayload.self, from: Data(#"{"type":"Consumable","offerType":3}"#.utf8))
        #expect(transaction.offerType == .offerCode)
        #expect(OfferType.offerCode.rawValue == 3)
        let object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(transaction)) as? [String: Any])
        #expect(object["offerType"] as? Int == 3)
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

    /// Apple's `RESCIND_CONSENT` carries `appData` (no `data`): the app it is for comes from there.
    @Test func rescindConsentAppDataDecodes() throws {
        let json = Data(
            """
            {"notificationType":"RESCIND_CONSENT","notificationUUID":"002e14d5-51f5-4503-b5a8-c3a1af68eb20",
             "appData":{"appAppleId":41234,"bundleId":"com.example","environment":"Sandbox",
                        "signedAppTransactionInfo":"signed_app_transaction_info_value"},
             "version":"2.0","signedDate":1698148900000}
            """.utf8)
        let payload = try JSONDecoder().decode(ResponseBodyV2DecodedPayload.self, from: json)
        #expect(payload.notificationType == .rescindConsent)
        #expect(payload.data == nil)
        #expect(payload.appData?.signedAppTransactionInfo == "signed_app_transaction_info_value")
        #expect(payload.parts == ["appData"])
        #expect(payload.declaredBundleId == "com.example")
        #expect(payload.declaredAppAppleId == 41234)
        #expect(payload.declaredEnvironment == .sandbox)
        let object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(payload)) as? [String: Any])
        #expect((object["appData"] as? [String: Any])?["bundleId"] as? String == "com.example")
    }

    /// Every part Apple may send is seen, so that none escapes the checks made on another.
    @Test func partsNameEveryPartPresent() {
        let all = ResponseBodyV2DecodedPayload(
            data: NotificationData(), summary: NotificationSummary(), externalPurchaseToken: ExternalPurchaseToken(),
            appData: AppData())
        #expect(all.parts == ["data", "summary", "externalPurchaseToken", "appData"])
        #expect(ResponseBodyV2DecodedPayload().parts.isEmpty)
    }

    /// The 2026 fields (12-month commitments, Advanced Commerce, migrations) are kept, not dropped.
    @Test func newerTransactionAndRenewalFieldsDecodeAndEncodeBack() throws {
        let transactionJSON = Data(
            """
            {"transactionId":"2","originalTransactionId":"1","previousOriginalTransactionId":"0",
             "billingPlanType":"MONTHLY_WITH_12_MONTH_COMMITMENT",
             "commitmentInfo":{"billingPeriodNumber":3,"totalBillingPeriods":12,"commitmentPrice":119880,
                               "commitmentExpiresDate":1790000000000},
             "advancedCommerceInfo":{"requestReferenceId":"r-1","items":[{"SKU":"a","price":1.5,"ok":true,"none":null}]}}
            """.utf8)
        let transaction = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: transactionJSON)
        #expect(transaction.previousOriginalTransactionId == "0")
        #expect(transaction.billingPlanType == "MONTHLY_WITH_12_MONTH_COMMITMENT")
        #expect(transaction.commitmentInfo?["totalBillingPeriods"] == .integer(12))
        #expect(transaction.commitmentInfo?["commitmentExpiresDate"] == .integer(1_790_000_000_000))
        #expect(transaction.advancedCommerceInfo?["requestReferenceId"] == .string("r-1"))
        guard case .array(let items)? = transaction.advancedCommerceInfo?["items"] else {
            Issue.record("advancedCommerceInfo.items is not an array")
            return
        }
        #expect(items.first?["price"] == .double(1.5))
        #expect(items.first?["ok"] == .bool(true))
        #expect(items.first?["none"] == .null)
        let reencoded = try JSONDecoder().decode(JWSTransactionDecodedPayload.self, from: JSONEncoder().encode(transaction))
        #expect(reencoded == transaction)

        let renewalJSON = Data(
            """
            {"originalTransactionId":"1","renewalBillingPlanType":"MONTHLY_WITH_12_MONTH_COMMITMENT",
             "commitmentInfo":{"billingPeriodNumber":4},"advancedCommerceInfo":{"consistencyToken":"t"}}
            """.utf8)
        let renewal = try JSONDecoder().decode(JWSRenewalInfoDecodedPayload.self, from: renewalJSON)
        #expect(renewal.renewalBillingPlanType == "MONTHLY_WITH_12_MONTH_COMMITMENT")
        #expect(renewal.commitmentInfo?["billingPeriodNumber"] == .integer(4))
        #expect(renewal.advancedCommerceInfo?["consistencyToken"] == .string("t"))
        let object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(renewal)) as? [String: Any])
        #expect(object["renewalBillingPlanType"] as? String == "MONTHLY_WITH_12_MONTH_COMMITMENT")
        #expect((object["commitmentInfo"] as? [String: Any])?["billingPeriodNumber"] as? Int == 4)
    }
}
