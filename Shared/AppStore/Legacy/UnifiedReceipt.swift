import Foundation

/// The receipt summary inside a V1 server notification: Apple's `unified_receipt`.
public struct UnifiedReceipt: Decodable, Sendable, Hashable {
    public var status: Int?
    public var environment: AppStoreEnvironment?
    public var latestReceipt: String?
    public var latestReceiptInfo: [LegacyTransaction]
    public var pendingRenewalInfo: [LegacyPendingRenewalInfo]

    public init() {
        latestReceiptInfo = []
        pendingRenewalInfo = []
    }

    enum CodingKeys: String, CodingKey {
        case status, environment
        case latestReceipt = "latest_receipt"
        case latestReceiptInfo = "latest_receipt_info"
        case pendingRenewalInfo = "pending_renewal_info"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        status = container.legacyInt(.status)
        environment = container.legacyString(.environment).map(AppStoreEnvironment.init(legacyValue:))
        latestReceipt = container.legacyString(.latestReceipt)
        latestReceiptInfo = container.legacyArray(LegacyTransaction.self, .latestReceiptInfo)
        pendingRenewalInfo = container.legacyArray(LegacyPendingRenewalInfo.self, .pendingRenewalInfo)
    }
}
