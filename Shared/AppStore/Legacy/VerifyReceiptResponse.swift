import Foundation

/// The JSON answer of Apple's `verifyReceipt` endpoint: Apple's `responseBody`.
/// Read leniently: unknown fields are ignored, numbers sent as strings are accepted.
public struct VerifyReceiptResponse: Decodable, Sendable, Hashable {
    /// `0` valid, `21006` valid with an expired subscription, `21xxx` an error (see ``ReceiptStatus``).
    public var status: Int
    /// `Production` or `Sandbox`.
    public var environment: AppStoreEnvironment?
    public var receipt: LegacyReceipt?
    /// The latest transactions of auto-renewable subscriptions (and, in iOS 7 responses, all purchases).
    public var latestReceiptInfo: [LegacyTransaction]
    /// iOS 6 only: the last transaction of an expired subscription (status `21006`).
    public var latestExpiredReceiptInfo: LegacyTransaction?
    public var pendingRenewalInfo: [LegacyPendingRenewalInfo]
    /// The latest base64 receipt; may be stored and verified again later.
    public var latestReceipt: String?
    /// Apple's `is-retryable`: the error was temporary.
    public var isRetryable: Bool?

    public init(status: Int) {
        self.status = status
        latestReceiptInfo = []
        pendingRenewalInfo = []
    }

    enum CodingKeys: String, CodingKey {
        case status, environment, receipt
        case latestReceiptInfo = "latest_receipt_info"
        case latestExpiredReceiptInfo = "latest_expired_receipt_info"
        case pendingRenewalInfo = "pending_renewal_info"
        case latestReceipt = "latest_receipt"
        case isRetryable = "is-retryable"
        case isRetryableUnderscore = "is_retryable"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let status = container.legacyInt(.status) else {
            throw DecodingError.dataCorruptedError(
                forKey: .status, in: container, debugDescription: "verifyReceipt response without a numeric status")
        }
        self.status = status
        environment = container.legacyString(.environment).map(AppStoreEnvironment.init(legacyValue:))
        receipt = container.legacyObject(LegacyReceipt.self, .receipt)
        latestReceiptInfo = container.legacyArray(LegacyTransaction.self, .latestReceiptInfo)
        latestExpiredReceiptInfo = container.legacyObject(LegacyTransaction.self, .latestExpiredReceiptInfo)
        pendingRenewalInfo = container.legacyArray(LegacyPendingRenewalInfo.self, .pendingRenewalInfo)
        latestReceipt = container.legacyString(.latestReceipt)
        isRetryable = container.legacyBool(.isRetryable) ?? container.legacyBool(.isRetryableUnderscore)
    }
}
