package import Foundation

/// The decoded receipt in a `verifyReceipt` response: Apple's `responseBody.Receipt`.
///
/// Two shapes exist. iOS 7 app receipts carry `bundle_id`, `application_version` and the purchases in
/// `in_app`. iOS 6 transaction receipts carry one purchase's fields at the top level next to `bid`,
/// `bvrs` and `item_id`; that purchase is ``transaction``.
package struct LegacyReceipt: Decodable, LegacyDecodable, Sendable, Hashable {
    // iOS 7 app receipt
    package var bundleId: String?
    package var applicationVersion: String?
    package var originalApplicationVersion: String?
    package var receiptType: String?
    package var adamId: Int?
    package var appItemId: Int?
    package var receiptCreationDate: Date?
    package var requestDate: Date?
    package var originalPurchaseDate: Date?
    package var inApp: [LegacyTransaction]

    // iOS 6 transaction receipt
    /// The app's bundle identifier (iOS 6).
    package var bid: String?
    /// The app's version (iOS 6).
    package var bvrs: String?
    /// The App Store's identifier of the product (iOS 6).
    package var itemId: String?
    /// The purchase whose fields are at the top of an iOS 6 receipt; `nil` for iOS 7 receipts.
    package var transaction: LegacyTransaction?

    /// The bundle identifier from either shape.
    package var effectiveBundleId: String? { bundleId ?? bid }

    package init() { inApp = [] }

    enum CodingKeys: String, CodingKey {
        case bundleId = "bundle_id"
        case applicationVersion = "application_version"
        case originalApplicationVersion = "original_application_version"
        case receiptType = "receipt_type"
        case adamId = "adam_id"
        case appItemId = "app_item_id"
        case receiptCreationDate = "receipt_creation_date"
        case receiptCreationDateMs = "receipt_creation_date_ms"
        case requestDate = "request_date"
        case requestDateMs = "request_date_ms"
        case originalPurchaseDate = "original_purchase_date"
        case originalPurchaseDateMs = "original_purchase_date_ms"
        case inApp = "in_app"
        case bid, bvrs
        case itemId = "item_id"
        case transactionId = "transaction_id"
    }

    package init(from decoder: any Decoder) throws { try self.init(legacy: LegacyFields(decoder)) }

    init(legacy container: LegacyFields<CodingKeys>) throws {
        bundleId = container.legacyString(.bundleId)
        applicationVersion = container.legacyString(.applicationVersion)
        originalApplicationVersion = container.legacyString(.originalApplicationVersion)
        receiptType = container.legacyString(.receiptType)
        adamId = container.legacyInt(.adamId)
        appItemId = container.legacyInt(.appItemId)
        receiptCreationDate = container.legacyDate(millis: .receiptCreationDateMs, text: .receiptCreationDate)
        requestDate = container.legacyDate(millis: .requestDateMs, text: .requestDate)
        originalPurchaseDate = container.legacyDate(millis: .originalPurchaseDateMs, text: .originalPurchaseDate)
        inApp = container.legacyArray(LegacyTransaction.self, .inApp)
        bid = container.legacyString(.bid)
        bvrs = container.legacyString(.bvrs)
        itemId = container.legacyString(.itemId)
        transaction = container.legacyString(.transactionId) == nil ? nil : try LegacyTransaction(legacy: container.rekeyed())
    }
}
