import Foundation

/// The receipt summary inside a V1 server notification: Apple's `unified_receipt`.
package struct UnifiedReceipt: Decodable, LegacyDecodable, Sendable, Hashable {
    package var status: Int?
    package var environment: AppStoreEnvironment?
    package var latestReceipt: String?
    package var latestReceiptInfo: [LegacyTransaction]
    package var pendingRenewalInfo: [LegacyPendingRenewalInfo]

    package init() {
        latestReceiptInfo = []
        pendingRenewalInfo = []
    }

    enum CodingKeys: String, CodingKey {
        case status, environment
        case latestReceipt = "latest_receipt"
        case latestReceiptInfo = "latest_receipt_info"
        case pendingRenewalInfo = "pending_renewal_info"
    }

    package init(from decoder: any Decoder) throws { try self.init(legacy: LegacyFields(decoder)) }

    init(legacy container: LegacyFields<CodingKeys>) throws {
        status = container.legacyInt(.status)
        environment = container.legacyString(.environment).map(AppStoreEnvironment.init(legacyValue:))
        latestReceipt = container.legacyString(.latestReceipt)
        latestReceiptInfo = container.legacyArray(LegacyTransaction.self, .latestReceiptInfo)
        pendingRenewalInfo = container.legacyArray(LegacyPendingRenewalInfo.self, .pendingRenewalInfo)
    }
}
