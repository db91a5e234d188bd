import Foundation

/// The JSON answer of Apple's `verifyReceipt` endpoint: Apple's `responseBody`.
/// Read leniently: unknown fields are ignored, numbers sent as strings are accepted.
package struct VerifyReceiptResponse: Decodable, LegacyDecodable, Sendable, Hashable {
    /// `0` valid, `21006` valid with an expired subscription, `21xxx` an error (see ``ReceiptStatus``).
    package var status: Int
    /// `Production` or `Sandbox`.
    package var environment: AppStoreEnvironment?
    package var receipt: LegacyReceipt?
    /// The latest transactions of auto-renewable subscriptions (and, in iOS 7 responses, all purchases).
    package var latestReceiptInfo: [LegacyTransaction]
    /// iOS 6 only: the last transaction of an expired subscription (status `21006`).
    package var latestExpiredReceiptInfo: LegacyTransaction?
    package var pendingRenewalInfo: [LegacyPendingRenewalInfo]
    /// The latest base64 receipt; may be stored and verified again later.
    package var latestReceipt: String?
    /// Apple's `is-retryable`: the error was temporary.
    package var isRetryable: Bool?

    package init(status: Int) {
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

    package init(from decoder: any Decoder) throws { try self.init(legacy: LegacyFields(decoder)) }

    /// A `verifyReceipt` answer read from its bytes with ``Core/JSONReader`` (what `init(from:)` reads, without `Codable`'s cost).
    package static func read(_ bytes: [UInt8]) throws -> Self { try readLegacy(bytes) }

    init(legacy container: LegacyFields<CodingKeys>) throws {
        guard let status = container.legacyInt(.status) else {
            throw container.missing(.status, "verifyReceipt response without a numeric status")
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
