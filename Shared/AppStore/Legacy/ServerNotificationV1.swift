package import Foundation

/// A version 1 App Store server-to-server notification: Apple's `responseBodyV1`.
///
/// V1 notifications are not signed, and the shared secret in ``password`` is known to everyone with App Store
/// Connect access (some apps even ship it). So a V1 notification is a trigger, never evidence: Tollgate asks
/// Apple about its ``latestReceipt`` and credits what Apple answers, never the notification's own fields.
package struct ServerNotificationV1: Decodable, LegacyDecodable, Sendable, Hashable {
    /// Apple's `notification_type`, e.g. `INITIAL_BUY`, `DID_RENEW`, `CANCEL`, `REFUND`.
    package var notificationType: String
    package var password: String?
    /// `PROD` or `Sandbox` in Apple's spelling, read as an ``AppStoreEnvironment``.
    package var environment: AppStoreEnvironment?
    /// `true` or `false` (Apple sends the text).
    package var autoRenewStatus: Bool?
    package var autoRenewProductId: String?
    package var autoRenewStatusChangeDate: Date?
    package var expirationIntent: Int?
    /// The app's bundle identifier.
    package var bid: String?
    /// The app's version.
    package var bvrs: String?
    package var originalTransactionId: String?
    package var unifiedReceipt: UnifiedReceipt?
    /// The top-level `latest_receipt` of notifications older than `unified_receipt`.
    package var topLevelLatestReceipt: String?

    /// The receipt to ask Apple about: `unified_receipt.latest_receipt`, else the older top-level one.
    package var latestReceipt: String? {
        if let receipt = unifiedReceipt?.latestReceipt, !receipt.isEmpty { return receipt }
        return topLevelLatestReceipt.flatMap { $0.isEmpty ? nil : $0 }
    }

    package init(notificationType: String) {
        self.notificationType = notificationType
    }

    enum CodingKeys: String, CodingKey {
        case notificationType = "notification_type"
        case password, environment, bid, bvrs
        case autoRenewStatus = "auto_renew_status"
        case autoRenewProductId = "auto_renew_product_id"
        case autoRenewStatusChangeDate = "auto_renew_status_change_date"
        case autoRenewStatusChangeDateMs = "auto_renew_status_change_date_ms"
        case expirationIntent = "expiration_intent"
        case originalTransactionId = "original_transaction_id"
        case unifiedReceipt = "unified_receipt"
        case topLevelLatestReceipt = "latest_receipt"
    }

    package init(from decoder: any Decoder) throws { try self.init(legacy: LegacyFields(decoder)) }

    /// A V1 notification read from its bytes with ``Core/JSONReader`` (what `init(from:)` reads, without `Codable`'s cost).
    package static func read(_ bytes: [UInt8]) throws -> Self { try readLegacy(bytes) }

    init(legacy container: LegacyFields<CodingKeys>) throws {
        guard let type = container.legacyString(.notificationType) else {
            throw container.missing(.notificationType, "V1 notification without notification_type")
        }
        notificationType = type
        password = container.legacyString(.password)
        environment = container.legacyString(.environment).map(AppStoreEnvironment.init(legacyValue:))
        autoRenewStatus = container.legacyBool(.autoRenewStatus)
        autoRenewProductId = container.legacyString(.autoRenewProductId)
        autoRenewStatusChangeDate = container.legacyDate(
            millis: .autoRenewStatusChangeDateMs, text: .autoRenewStatusChangeDate)
        expirationIntent = container.legacyInt(.expirationIntent)
        bid = container.legacyString(.bid)
        bvrs = container.legacyString(.bvrs)
        originalTransactionId = container.legacyString(.originalTransactionId)
        unifiedReceipt = container.legacyObject(UnifiedReceipt.self, .unifiedReceipt)
        topLevelLatestReceipt = container.legacyString(.topLevelLatestReceipt)
    }
}
