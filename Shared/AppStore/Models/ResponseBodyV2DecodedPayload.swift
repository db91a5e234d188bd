/// An App Store Server Notification V2, decoded from its `signedPayload`
/// (Apple's `ResponseBodyV2DecodedPayload`). Apple sends exactly one of `data`, `summary`,
/// `externalPurchaseToken` and `appData` (``parts``); the verifier refuses any other count.
package struct ResponseBodyV2DecodedPayload: SignedPayload, Codable, Hashable {
    package var notificationType: NotificationTypeV2?
    package var subtype: NotificationSubtype?
    package var notificationUUID: String?
    package var data: NotificationData?
    package var summary: NotificationSummary?
    package var externalPurchaseToken: ExternalPurchaseToken?
    package var appData: AppData?
    package var version: String?
    package var signedDate: Int64?

    package init(
        notificationType: NotificationTypeV2? = nil, subtype: NotificationSubtype? = nil,
        notificationUUID: String? = nil, data: NotificationData? = nil, summary: NotificationSummary? = nil,
        externalPurchaseToken: ExternalPurchaseToken? = nil, appData: AppData? = nil, version: String? = "2.0",
        signedDate: Int64? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.data = data
        self.summary = summary
        self.externalPurchaseToken = externalPurchaseToken
        self.appData = appData
        self.version = version
        self.signedDate = signedDate
    }

    /// The names of the parts present, among `data`, `summary`, `externalPurchaseToken` and `appData`.
    package var parts: [String] {
        [
            data.map { _ in "data" }, summary.map { _ in "summary" },
            externalPurchaseToken.map { _ in "externalPurchaseToken" }, appData.map { _ in "appData" },
        ].compactMap { $0 }
    }

    /// The environment the notification declares, from whichever of its parts is present.
    package var declaredEnvironment: AppStoreEnvironment? {
        data?.environment ?? summary?.environment ?? externalPurchaseToken?.environment ?? appData?.environment
    }

    /// The bundle ID the notification declares.
    package var declaredBundleId: String? {
        data?.bundleId ?? summary?.bundleId ?? externalPurchaseToken?.bundleId ?? appData?.bundleId
    }

    /// The app Apple ID the notification declares.
    package var declaredAppAppleId: Int64? {
        data?.appAppleId ?? summary?.appAppleId ?? externalPurchaseToken?.appAppleId ?? appData?.appAppleId
    }
}
