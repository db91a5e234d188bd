import Core
package import Pipeline

/// One schema-v2 event (docs/EVENTS.md) as the exporter reads it from the `event` field of an events stream entry:
/// the members it writes into columns, and the JSON as the ledger wrote it (`body`). Numbers written as strings
/// are read as numbers; a member of the wrong kind makes the event unreadable (``ExportError/badEvent(_:)``).
package struct ExportEvent: Sendable, Equatable {
    package var id: String
    package var type: String
    package var userId: String?
    package var seq: Int64
    package var seqScope: String?
    /// The ledger side the event is of (``Pipeline/LedgerSide``; its `seq` counts in that side's sequence).
    package var side: LedgerSide
    /// ISO 8601 times, passed to PostgreSQL as they are (`::timestamptz`).
    package var at: String
    package var environment: String?
    package var productId: String?
    package var transactionId: String?
    package var originalTransactionId: String?
    package var quantity: Int64?
    package var price: Int64?
    package var currency: String?
    package var storefront: String?
    package var ownershipType: String?
    package var offerType: Int64?
    package var offerIdentifier: String?
    package var purchasedAt: String?
    package var delta: Int64?
    package var balance: Int64?
    package var shortfall: Int64?
    package var entitlement: String?
    package var state: String?
    package var expiresAt: String?
    package var autoRenew: Bool?
    package var revocationType: String?
    package var revocationPercentage: Int64?
    package var reason: String?
    package var jobId: String?
    package var grantId: String?
    package var coins: Int64?
    package var until: String?
    package var amount: Int64?
    package var idempotencyKey: String?
    package var by: String?
    package var revokedBy: String?
    package var notificationType: String?
    package var subtype: String?
    package var body: String

    /// Reads the event JSON `bytes`.
    package init(json bytes: [UInt8]) throws(ExportError) {
        let fields: JSONFields
        do {
            fields = try JSONFields(JSONReader.parse(bytes))
        } catch {
            throw .badEvent(error.message)
        }
        do {
            try self.init(fields: fields, body: String(decoding: bytes, as: UTF8.self))
        } catch {
            throw .badEvent(error.message)
        }
    }

    private init(fields f: JSONFields, body: String) throws(JSONError) {
        func text(_ key: String) throws(JSONError) -> String? {
            switch f.members[key] {
            case .integer(let number): return String(number)
            default: return try f.optionalString(key)
            }
        }
        func number(_ key: String) throws(JSONError) -> Int64? {
            if case .string(let string) = f.members[key] {
                guard let number = Int64(string) else { throw JSONError("\(key) is not a whole number") }
                return number
            }
            return try f.optionalInt64(key)
        }
        id = try f.string("id")
        type = try f.string("type")
        userId = try f.optionalString("userId")
        guard let seq = try number("seq") else { throw JSONError("seq is missing") }
        self.seq = seq
        seqScope = try f.optionalString("seqScope")
        guard let side = LedgerSide(label: try f.optionalString("side")) else { throw JSONError("side is not one") }
        self.side = side
        at = try f.string("at")
        environment = try f.optionalString("environment")
        productId = try f.optionalString("productId")
        transactionId = try text("transactionId")
        originalTransactionId = try text("originalTransactionId")
        quantity = try number("quantity")
        price = try number("price")
        currency = try f.optionalString("currency")
        storefront = try f.optionalString("storefront")
        ownershipType = try f.optionalString("ownershipType")
        offerType = try number("offerType")
        offerIdentifier = try f.optionalString("offerIdentifier")
        purchasedAt = try f.optionalString("purchasedAt")
        delta = try number("delta")
        balance = try number("balance")
        shortfall = try number("shortfall")
        entitlement = try f.optionalString("entitlement")
        state = try f.optionalString("state")
        expiresAt = try f.optionalString("expiresAt")
        autoRenew = try f.optionalBool("autoRenew")
        revocationType = try text("revocationType")
        revocationPercentage = try number("revocationPercentage")
        reason = try f.optionalString("reason")
        jobId = try f.optionalString("jobId")
        grantId = try f.optionalString("grantId")
        coins = try number("coins")
        until = try f.optionalString("until")
        amount = try number("amount")
        idempotencyKey = try f.optionalString("idempotencyKey")
        by = try f.optionalString("by")
        revokedBy = try f.optionalString("revokedBy")
        notificationType = try f.optionalString("notificationType")
        subtype = try f.optionalString("subtype")
        self.body = body
    }

    /// Whether the event changed an entitlement's state: a row of `subscriptions` (renewal state over time).
    package var changesEntitlement: Bool { userId != nil && entitlement != nil && state != nil && grantId == nil }
}
