/// The app and signed transaction data of a V2 notification (Apple's `Data`).
package struct NotificationData: Codable, Hashable, Sendable {
    package var appAppleId: Int64?
    package var bundleId: String?
    package var bundleVersion: String?
    package var environment: AppStoreEnvironment?
    package var signedTransactionInfo: String?
    package var signedRenewalInfo: String?
    package var status: SubscriptionStatus?
    package var consumptionRequestReason: ConsumptionRequestReason?

    package init(
        appAppleId: Int64? = nil, bundleId: String? = nil, bundleVersion: String? = nil,
        environment: AppStoreEnvironment? = nil, signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil, status: SubscriptionStatus? = nil,
        consumptionRequestReason: ConsumptionRequestReason? = nil
    ) {
        self.appAppleId = appAppleId
        self.bundleId = bundleId
        self.bundleVersion = bundleVersion
        self.environment = environment
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
        self.status = status
        self.consumptionRequestReason = consumptionRequestReason
    }
}
