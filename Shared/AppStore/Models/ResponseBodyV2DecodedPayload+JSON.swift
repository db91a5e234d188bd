package import Core

/// Apple's signed notification (App Store Server Notifications V2) read by hand, with its four parts, by the rules of
/// ``JWSTransactionDecodedPayload``'s reader. The nested signed transaction, renewal info and app transaction stay
/// strings here: the verifier checks each one's own signature after this.
extension ResponseBodyV2DecodedPayload: HandDecodedPayload {
    package init(json fields: JSONFields) throws(JSONError) {
        self.init(version: nil)
        notificationType = try fields.optionalString("notificationType").map(NotificationTypeV2.init(rawValue:))
        subtype = try fields.optionalString("subtype").map(NotificationSubtype.init(rawValue:))
        notificationUUID = try fields.optionalString("notificationUUID")
        data = try fields.optionalObject("data").map(NotificationData.init(json:))
        summary = try fields.optionalObject("summary").map(NotificationSummary.init(json:))
        externalPurchaseToken = try fields.optionalObject("externalPurchaseToken").map(ExternalPurchaseToken.init(json:))
        appData = try fields.optionalObject("appData").map(AppData.init(json:))
        version = try fields.optionalString("version")
        signedDate = try fields.optionalInt64("signedDate")
    }
}

extension NotificationData {
    init(json fields: JSONFields) throws(JSONError) {
        self.init()
        appAppleId = try fields.optionalInt64("appAppleId")
        bundleId = try fields.optionalString("bundleId")
        bundleVersion = try fields.optionalString("bundleVersion")
        environment = try fields.optionalString("environment").map(AppStoreEnvironment.init(rawValue:))
        signedTransactionInfo = try fields.optionalString("signedTransactionInfo")
        signedRenewalInfo = try fields.optionalString("signedRenewalInfo")
        status = try fields.optionalInt("status").map(SubscriptionStatus.init(rawValue:))
        consumptionRequestReason = try fields.optionalString("consumptionRequestReason")
            .map(ConsumptionRequestReason.init(rawValue:))
    }
}

extension NotificationSummary {
    init(json fields: JSONFields) throws(JSONError) {
        self.init()
        requestIdentifier = try fields.optionalString("requestIdentifier")
        environment = try fields.optionalString("environment").map(AppStoreEnvironment.init(rawValue:))
        appAppleId = try fields.optionalInt64("appAppleId")
        bundleId = try fields.optionalString("bundleId")
        productId = try fields.optionalString("productId")
        storefrontCountryCodes = try fields.optionalStrings("storefrontCountryCodes")
        failedCount = try fields.optionalInt64("failedCount")
        succeededCount = try fields.optionalInt64("succeededCount")
    }
}

extension ExternalPurchaseToken {
    init(json fields: JSONFields) throws(JSONError) {
        self.init(
            externalPurchaseId: try fields.optionalString("externalPurchaseId"),
            tokenCreationDate: try fields.optionalInt64("tokenCreationDate"),
            appAppleId: try fields.optionalInt64("appAppleId"),
            bundleId: try fields.optionalString("bundleId"))
    }
}

extension AppData {
    init(json fields: JSONFields) throws(JSONError) {
        self.init(
            appAppleId: try fields.optionalInt64("appAppleId"), bundleId: try fields.optionalString("bundleId"),
            environment: try fields.optionalString("environment").map(AppStoreEnvironment.init(rawValue:)),
            signedAppTransactionInfo: try fields.optionalString("signedAppTransactionInfo"))
    }
}
