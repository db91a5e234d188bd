/// The signed record of a customer's purchase of the app itself (Apple's `AppTransaction`).
/// Its environment is in `receiptType`.
public struct AppTransaction: SignedPayload, Codable, Hashable {
    public var receiptType: AppStoreEnvironment?
    public var appAppleId: Int64?
    public var bundleId: String?
    public var applicationVersion: String?
    public var versionExternalIdentifier: Int64?
    public var receiptCreationDate: Int64?
    public var originalPurchaseDate: Int64?
    public var originalApplicationVersion: String?
    public var deviceVerification: String?
    public var deviceVerificationNonce: String?
    public var preorderDate: Int64?
    public var appTransactionId: String?
    public var originalPlatform: PurchasePlatform?
    public var signedDate: Int64?

    public init(
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
