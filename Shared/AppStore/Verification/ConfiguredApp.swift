/// One app (bundle ID) of a deployment and what Tollgate holds for it: the identity Apple signs into its data, and the
/// secrets Tollgate uses when it speaks to Apple for that app or signs for it (``AppRegistry``).
package struct ConfiguredApp: Sendable, Hashable {
    package var bundleId: String
    /// Checked on production data (required in production).
    package var appAppleId: Int64?
    /// The App Store Server API key its calls are signed with (the token's `bid` is ``bundleId``).
    package var apiKey: AppStoreKey?
    /// `verifyReceipt`'s password for its receipts, and the password its V1 notifications carry.
    package var sharedSecret: String?
    /// The subscription-offer key its promotional offers are signed with.
    package var offerKey: AppStoreKey?

    package init(
        bundleId: String, appAppleId: Int64? = nil, apiKey: AppStoreKey? = nil, sharedSecret: String? = nil,
        offerKey: AppStoreKey? = nil
    ) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.apiKey = apiKey
        self.sharedSecret = sharedSecret
        self.offerKey = offerKey
    }

    /// Its identity alone, as the signature checks compare it.
    package var identity: AppIdentity.App { AppIdentity.App(bundleId: bundleId, appAppleId: appAppleId) }
}
