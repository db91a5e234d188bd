package import Foundation

/// What an App Store receipt (the PKCS#7 `appStoreReceiptURL` file) says about itself, read from its bytes.
///
/// Nothing here is evidence on its own: ``AppReceiptParser`` reads it and ``ReceiptSignatureVerifier`` proves
/// that Apple signed it. Even then Tollgate only takes the identifiers of the purchases from it; what each purchase
/// is now (refunded, renewed, upgraded) comes from Apple's signed App Store Server API answers.
package struct AppReceipt: Sendable, Hashable {
    /// Attribute 0, undocumented but always present: `Production`, `ProductionSandbox` (sandbox) or `Xcode`.
    package var receiptType: String?
    /// Attribute 2.
    package var bundleId: String?
    /// Attribute 3.
    package var applicationVersion: String?
    /// Attribute 4: an opaque value Apple uses with the device identifier to make the hash.
    package var opaqueValue: [UInt8]?
    /// Attribute 12.
    package var creationDate: Date?
    /// Attribute 17, one per in-app purchase the receipt carries.
    package var purchases: [AppReceiptPurchase]

    package init(
        receiptType: String? = nil, bundleId: String? = nil, applicationVersion: String? = nil,
        opaqueValue: [UInt8]? = nil, creationDate: Date? = nil, purchases: [AppReceiptPurchase] = []
    ) {
        self.receiptType = receiptType
        self.bundleId = bundleId
        self.applicationVersion = applicationVersion
        self.opaqueValue = opaqueValue
        self.creationDate = creationDate
        self.purchases = purchases
    }

    /// The environment the receipt names: `Production` is production, `ProductionSandbox` and `Sandbox` are
    /// sandbox; `nil` for `Xcode` receipts and anything else (no App Store environment holds their purchases).
    package var environment: AppStoreEnvironment? {
        switch receiptType {
        case "Production": return .production
        case "ProductionSandbox", "Sandbox": return .sandbox
        default: return nil
        }
    }

    /// Every transaction and original transaction ID the receipt names, each once, in receipt order.
    package var transactionIdentifiers: [String] {
        var seen = Set<String>()
        var identifiers: [String] = []
        for purchase in purchases {
            for id in [purchase.transactionId, purchase.originalTransactionId].compactMap({ $0 }) where !id.isEmpty {
                if seen.insert(id).inserted { identifiers.append(id) }
            }
        }
        return identifiers
    }
}

/// One in-app purchase entry of an ``AppReceipt`` (attribute 17's nested set).
package struct AppReceiptPurchase: Sendable, Hashable {
    /// Attribute 1701.
    package var quantity: Int?
    /// Attribute 1702.
    package var productId: String?
    /// Attribute 1703.
    package var transactionId: String?
    /// Attribute 1705.
    package var originalTransactionId: String?
    /// Attribute 1704.
    package var purchaseDate: Date?
    /// Attribute 1708, subscriptions only.
    package var expiresDate: Date?

    package init(
        quantity: Int? = nil, productId: String? = nil, transactionId: String? = nil, originalTransactionId: String? = nil,
        purchaseDate: Date? = nil, expiresDate: Date? = nil
    ) {
        self.quantity = quantity
        self.productId = productId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
    }
}

/// The attribute types Tollgate reads or writes, as Apple numbers them.
package enum AppReceiptField {
    package static let receiptType = 0
    package static let bundleId = 2
    package static let applicationVersion = 3
    package static let opaqueValue = 4
    package static let sha1Hash = 5
    package static let creationDate = 12
    package static let inAppPurchase = 17
    package static let originalApplicationVersion = 19
    package static let quantity = 1701
    package static let productId = 1702
    package static let transactionId = 1703
    package static let purchaseDate = 1704
    package static let originalTransactionId = 1705
    package static let expiresDate = 1708
}
