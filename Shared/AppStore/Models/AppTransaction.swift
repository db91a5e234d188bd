/// The signed record of a customer's purchase of the app itself (Apple's `AppTransaction`).
/// Its environment is in `receiptType`.
package struct AppTransaction: SignedPayload, Codable, Hashable {
    package var receiptType: AppStoreEnvironment?
    package var appAppleId: Int64?
    package var bundleId: String?
    package var applicationVersion: String?
    package var versionExternalIdentifier: Int64?
    package var receiptCreationDate: Int64?
    package var originalPurchaseDate: Int64?
    package var originalApplicationVersion: String?
    package var deviceVerification: String?
    package var deviceVerificationNonce: String?
    package var preorderDate: Int64?
    package var appTransactionId: String?
    package var originalPlatform: PurchasePlatform?
    package var signedDate: Int64?

    package init(
        receiptType: AppStoreEnvironment? = nil, appAppleId: Int64? = nil, bundleId: String? = nil,
        applicationVersion: String? = nil, originalPurchaseDate: Int64? = nil, appTransactionId: String? = nil,
        signedDate: Int64? = nil
    ) {
        self.receiptType = receiptType
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.applicationVersion = applicationVersion
        self.originalPurchaseDate = originalPurchaseDate
        self.appTransactionId = appTransactionId
        self.signedDate = signedDate
    }
}
