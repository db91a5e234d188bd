/// A token for a purchase made outside the App Store (Apple's `ExternalPurchaseToken`). A sandbox
/// token's `externalPurchaseId` starts with `SANDBOX`.
package struct ExternalPurchaseToken: Codable, Hashable, Sendable {
    package var externalPurchaseId: String?
    package var tokenCreationDate: Int64?
    package var appAppleId: Int64?
    package var bundleId: String?

    package init(externalPurchaseId: String? = nil, tokenCreationDate: Int64? = nil, appAppleId: Int64? = nil, bundleId: String? = nil) {
        self.externalPurchaseId = externalPurchaseId
        self.tokenCreationDate = tokenCreationDate
        self.appAppleId = appAppleId
        self.bundleId = bundleId
    }

    /// The environment Apple's token implies.
    package var environment: AppStoreEnvironment {
        (externalPurchaseId ?? "").hasPrefix("SANDBOX") ? .sandbox : .production
    }
}
