/// An App Store Server Notification V2, decoded from its `signedPayload`
/// (Apple's `ResponseBodyV2DecodedPayload`). Exactly one of `data`, `summary` and
/// `externalPurchaseToken` is normally present.
package struct ResponseBodyV2DecodedPayload: SignedPayload, Codable, Hashable {
    package var notificationType: NotificationTypeV2?
    package var subtype: NotificationSubtype?
    package var notificationUUID: String?
    package var data: NotificationData?
    package var summary: NotificationSummary?
    package var externalPurchaseToken: ExternalPurchaseToken?
    package var version: String?
    package var signedDate: Int64?

    package init(
        notificationType: NotificationTypeV2? = nil, subtype: NotificationSubtype? = nil,
        notificationUUID: String? = nil, data: NotificationData? = nil, summary: NotificationSummary? = nil,
        externalPurchaseToken: ExternalPurchaseToken? = nil, version: String? = "2.0", signedDate: Int64? = nil
    ) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.data = data
        self.summary = summary
        self.externalPurchaseToken = externalPurchaseToken
        self.version = version
        self.signedDate = signedDate
    }

    /// The environment the notification declares, from whichever of its parts is present.
    package var declaredEnvironment: AppStoreEnvironment? {
        data?.environment ?? summary?.environment ?? externalPurchaseToken?.environment
    }

    /// The bundle ID the notification declares.
    package var declaredBundleId: String? {
        data?.bundleId ?? summary?.bundleId ?? externalPurchaseToken?.bundleId
    }

    /// The app Apple ID the notification declares.
    package var declaredAppAppleId: Int64? {
        data?.appAppleId ?? summary?.appAppleId ?? externalPurchaseToken?.appAppleId
    }
}
