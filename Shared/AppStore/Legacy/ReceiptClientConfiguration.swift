package import Foundation

/// Settings of the ``ReceiptClient``. Services read them from `TOLLGATE_VERIFY_RECEIPT_URL`,
/// `TOLLGATE_VERIFY_RECEIPT_SANDBOX_URL`, `TOLLGATE_SHARED_SECRET`, `TOLLGATE_BUNDLE_ID` and
/// `TOLLGATE_ACCEPT_SANDBOX` / `TOLLGATE_ENVIRONMENT`.
package struct ReceiptClientConfiguration: Sendable {
    /// Apple's production endpoint.
    package static let appleProductionURL = URL(string: "https://buy.itunes.apple.com/verifyReceipt")!
    /// Apple's sandbox endpoint.
    package static let appleSandboxURL = URL(string: "https://sandbox.itunes.apple.com/verifyReceipt")!

    /// The (default) app's bundle ID; receipts for an app that is neither this nor one of ``additionalApps`` are
    /// rejected with `wrong_bundle_id`.
    package var bundleId: String
    /// The app's shared secret (`password`); required for auto-renewable subscriptions.
    package var sharedSecret: String?
    /// The deployment's other apps (`TOLLGATE_APPS`), each with its own shared secret.
    package var additionalApps: [App]

    /// One more app: its bundle ID and shared secret.
    package struct App: Sendable, Hashable {
        package var bundleId: String
        package var sharedSecret: String?

        package init(bundleId: String, sharedSecret: String?) {
            self.bundleId = bundleId
            self.sharedSecret = sharedSecret
        }
    }

    /// Every accepted bundle ID, the default first.
    package var bundleIds: [String] { [bundleId] + additionalApps.map(\.bundleId) }

    /// The password sent with a receipt of `receiptBundleId` (what the receipt itself says, unproven: it only chooses
    /// the password, and Apple's answer is checked against the apps again). With one app, or a receipt whose app
    /// cannot be read (an iOS 6 transaction receipt), the default app's; a receipt naming an app that is not
    /// configured gets none, so no app's secret is sent with another app's receipt.
    package func sharedSecret(forReceiptOf receiptBundleId: String?) -> String? {
        guard !additionalApps.isEmpty, let receiptBundleId else { return sharedSecret }
        if receiptBundleId == bundleId { return sharedSecret }
        return additionalApps.first { $0.bundleId == receiptBundleId }?.sharedSecret
    }
    package var productionURL: URL
    package var sandboxURL: URL
    /// Whether a sandbox receipt (`21007` from production) is followed to the sandbox endpoint and
    /// accepted. Otherwise it is rejected with `sandbox_not_allowed`.
    package var allowSandbox: Bool
    /// Ask the sandbox endpoint first (for a sandbox-only deployment); `21008` then leads to production.
    /// Requires ``allowSandbox``.
    package var startInSandbox: Bool
    /// Apple's `exclude-old-transactions`: only the latest renewal of each subscription in
    /// `latest_receipt_info`.
    package var excludeOldTransactions: Bool
    /// Time allowed for each call to Apple.
    package var timeout: Duration
    /// The largest receipt accepted before any call, in base64 characters.
    package var maximumReceiptLength: Int

    package init(
        bundleId: String,
        sharedSecret: String? = nil,
        additionalApps: [App] = [],
        productionURL: URL = ReceiptClientConfiguration.appleProductionURL,
        sandboxURL: URL = ReceiptClientConfiguration.appleSandboxURL,
        allowSandbox: Bool = false,
        startInSandbox: Bool = false,
        excludeOldTransactions: Bool = false,
        timeout: Duration = .seconds(15),
        maximumReceiptLength: Int = 8 << 20
    ) {
        self.bundleId = bundleId
        self.sharedSecret = sharedSecret
        self.additionalApps = additionalApps
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.allowSandbox = allowSandbox
        self.startInSandbox = startInSandbox
        self.excludeOldTransactions = excludeOldTransactions
        self.timeout = timeout
        self.maximumReceiptLength = maximumReceiptLength
    }
}
