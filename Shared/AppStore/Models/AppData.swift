/// The app and its signed app transaction in a V2 notification about the app rather than a purchase
/// (Apple's `appData`, sent with `RESCIND_CONSENT`).
package struct AppData: Codable, Hashable, Sendable {
    package var appAppleId: Int64?
    package var bundleId: String?
    package var environment: AppStoreEnvironment?
    /// The app transaction (`AppTransaction`) signed by the App Store, as a JWS.
    package var signedAppTransactionInfo: String?

    package init(
        appAppleId: Int64? = nil, bundleId: String? = nil, environment: AppStoreEnvironment? = nil,
        signedAppTransactionInfo: String? = nil
    ) {
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.environment = environment
        self.signedAppTransactionInfo = signedAppTransactionInfo
    }
}
