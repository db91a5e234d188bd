package import Core

/// The event's JSON written and read by hand (``Core/JSONWriter``, ``Core/JSONReader``): the verifier writes
/// one per job and the fulfiller reads one per delivery, and `Codable` cost each of them more than the rest of its
/// JSON work (`scripts/bench-cpu --perf`). The bytes are those `JSONEncoder` wrote with `.sortedKeys` and
/// `.withoutEscapingSlashes` (members in sorted order, nil members left out; `PurchaseEventJSONTests` compares
/// the two), so events already in the streams and events written now read alike.
extension PurchaseEvent {
    package func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("apple", apple)
        writer.member("bundleId", bundleId)
        writer.member("environment", environment)
        writer.member("jobId", jobId)
        writer.member("kind", kind.rawValue)
        if let notification {
            writer.key("notification")
            notification.write(to: &writer)
        }
        writer.member("orderNo", orderNo)
        writer.member("project", project)
        writer.array("renewals", renewals) { $0.write(to: &$1) }
        writer.member("side", side)
        writer.member("source", source.rawValue)
        writer.array("transactions", transactions) { $0.write(to: &$1) }
        writer.member("userId", userId)
        writer.member("verifiedAt", verifiedAt)
        writer.member("version", version)
        writer.endObject()
    }

    package init(json fields: JSONFields) throws(JSONError) {
        self.init(
            version: try fields.int("version"), jobId: try fields.string("jobId"),
            kind: try fields.raw("kind", as: JobKind.self), source: try fields.raw("source", as: Job.Source.self),
            userId: try fields.optionalString("userId"), orderNo: try fields.optionalString("orderNo"),
            environment: try fields.string("environment"), verifiedAt: try fields.int64("verifiedAt"),
            transactions: try fields.array("transactions") { (value, path) throws(JSONError) in
                try PurchaseEventTransaction(json: JSONFields(value, path: path))
            },
            renewals: try fields.array("renewals") { (value, path) throws(JSONError) in
                try PurchaseEventRenewal(json: JSONFields(value, path: path))
            },
            notification: try fields.optionalObject("notification").map { (fields) throws(JSONError) in
                try PurchaseEventNotification(json: fields)
            })
        apple = try fields.optionalString("apple")
        side = try fields.optionalString("side")
        project = try fields.optionalString("project")
        bundleId = try fields.optionalString("bundleId")
    }
}

extension PurchaseEventTransaction {
    package func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("appAccountToken", appAccountToken)
        writer.member("appTransactionId", appTransactionId)
        writer.member("currency", currency)
        writer.member("expiresDate", expiresDate)
        writer.member("inAppOwnershipType", inAppOwnershipType)
        writer.member("isUpgraded", isUpgraded)
        writer.member("offerDiscountType", offerDiscountType)
        writer.member("offerIdentifier", offerIdentifier)
        writer.member("offerType", offerType)
        writer.member("originalPurchaseDate", originalPurchaseDate)
        writer.member("originalTransactionId", originalTransactionId)
        writer.member("price", price)
        writer.member("productId", productId)
        writer.member("productType", productType)
        writer.member("purchaseDate", purchaseDate)
        writer.member("quantity", quantity)
        writer.member("revocationDate", revocationDate)
        writer.member("revocationPercentage", revocationPercentage)
        writer.member("revocationReason", revocationReason)
        writer.member("revocationType", revocationType)
        writer.member("signedDate", signedDate)
        writer.member("storefront", storefront)
        writer.member("transactionId", transactionId)
        writer.member("webOrderLineItemId", webOrderLineItemId)
        writer.endObject()
    }

    package init(json fields: JSONFields) throws(JSONError) {
        self.init(
            transactionId: try fields.string("transactionId"),
            originalTransactionId: try fields.string("originalTransactionId"), productId: try fields.string("productId"),
            productType: try fields.optionalString("productType"), quantity: try fields.int("quantity"),
            purchaseDate: try fields.int64("purchaseDate"),
            originalPurchaseDate: try fields.optionalInt64("originalPurchaseDate"),
            expiresDate: try fields.optionalInt64("expiresDate"), revocationDate: try fields.optionalInt64("revocationDate"),
            revocationReason: try fields.optionalInt("revocationReason"),
            inAppOwnershipType: try fields.optionalString("inAppOwnershipType"),
            appAccountToken: try fields.optionalString("appAccountToken"),
            webOrderLineItemId: try fields.optionalString("webOrderLineItemId"),
            signedDate: try fields.optionalInt64("signedDate"), isUpgraded: try fields.optionalBool("isUpgraded"),
            offerType: try fields.optionalInt("offerType"), revocationType: try fields.optionalString("revocationType"),
            revocationPercentage: try fields.optionalInt("revocationPercentage"), price: try fields.optionalInt64("price"),
            currency: try fields.optionalString("currency"), appTransactionId: try fields.optionalString("appTransactionId"),
            offerIdentifier: try fields.optionalString("offerIdentifier"),
            offerDiscountType: try fields.optionalString("offerDiscountType"),
            storefront: try fields.optionalString("storefront"))
    }
}

extension PurchaseEventRenewal {
    package func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("autoRenewProductId", autoRenewProductId)
        writer.member("autoRenewStatus", autoRenewStatus)
        if let eligibleWinBackOfferIds {
            writer.array("eligibleWinBackOfferIds", eligibleWinBackOfferIds) { $1.string($0) }
        }
        writer.member("expirationIntent", expirationIntent)
        writer.member("gracePeriodExpiresDate", gracePeriodExpiresDate)
        writer.member("isInBillingRetryPeriod", isInBillingRetryPeriod)
        writer.member("originalTransactionId", originalTransactionId)
        writer.member("productId", productId)
        writer.member("signedDate", signedDate)
        writer.endObject()
    }

    package init(json fields: JSONFields) throws(JSONError) {
        self.init(
            originalTransactionId: try fields.string("originalTransactionId"), productId: try fields.optionalString("productId"),
            autoRenewStatus: try fields.optionalInt("autoRenewStatus"),
            autoRenewProductId: try fields.optionalString("autoRenewProductId"),
            expirationIntent: try fields.optionalInt("expirationIntent"),
            isInBillingRetryPeriod: try fields.optionalBool("isInBillingRetryPeriod"),
            gracePeriodExpiresDate: try fields.optionalInt64("gracePeriodExpiresDate"),
            signedDate: try fields.optionalInt64("signedDate"),
            eligibleWinBackOfferIds: try fields.optionalStrings("eligibleWinBackOfferIds"))
    }
}

extension PurchaseEventNotification {
    package func write(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("appTransactionId", appTransactionId)
        writer.member("notificationUUID", notificationUUID)
        writer.member("signedDate", signedDate)
        writer.member("subtype", subtype)
        writer.member("type", type)
        writer.member("version", version)
        writer.endObject()
    }

    package init(json fields: JSONFields) throws(JSONError) {
        self.init(
            type: try fields.string("type"), subtype: try fields.optionalString("subtype"),
            notificationUUID: try fields.optionalString("notificationUUID"), signedDate: try fields.optionalInt64("signedDate"),
            version: try fields.int("version"), appTransactionId: try fields.optionalString("appTransactionId"))
    }
}
