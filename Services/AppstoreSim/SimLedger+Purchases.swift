import AppStore
import Foundation
import HTTPTypes

extension SimLedger {
    static let defaultPeriodMillis: Int64 = 30 * 24 * 3_600_000

    /// A customer buys a product: a new transaction on a new (or the given) receipt, and Apple's
    /// `ONE_TIME_CHARGE` or `SUBSCRIBED`/`INITIAL_BUY` notification.
    mutating func purchase(_ request: PurchaseRequest, context: SimContext) throws(SimError) -> PurchaseOutcome {
        let type = try request.productType()
        let environment = try SimEnvironment.parse(request.environment)
        let bundleId = request.bundleId ?? context.configuration.bundleId
        guard !bundleId.isEmpty, bundleId.count <= 255 else { throw .invalid("bundleId must be 1-255 characters") }
        guard !request.productId.isEmpty, request.productId.count <= 255 else {
            throw .invalid("productId must be 1-255 characters")
        }
        let quantity = request.quantity ?? 1
        guard (1...100).contains(quantity) else { throw .invalid("quantity must be between 1 and 100") }
        if let token = request.appAccountToken, UUID(uuidString: token) == nil {
            throw .invalid("appAccountToken must be a UUID")
        }
        var periodMillis = Self.defaultPeriodMillis
        if let seconds = request.expiresInSeconds {
            guard type == .autoRenewableSubscription else {
                throw .invalid("expiresInSeconds applies to Auto-Renewable Subscription purchases only")
            }
            guard (1...(10 * 366 * 86_400)).contains(seconds) else {
                throw .invalid("expiresInSeconds must be between 1 and 10 years")
            }
            periodMillis = seconds * 1000
        }
        let ownership: InAppOwnershipType
        switch request.inAppOwnershipType {
        case nil, "PURCHASED": ownership = .purchased
        case "FAMILY_SHARED": ownership = .familyShared
        default: throw .invalid("inAppOwnershipType must be PURCHASED or FAMILY_SHARED")
        }
        let price = request.price ?? 990
        guard price >= 0 else { throw .invalid("price must not be negative") }
        let currency = request.currency ?? "USD"
        guard currency.count == 3 else { throw .invalid("currency must be an ISO 4217 code") }
        var receipt = try receiptForPurchase(request.receipt, environment: environment, bundleId: bundleId, now: context.now)

        let id = makeIdentifier()
        let isSubscription = type == .autoRenewableSubscription
        let group = request.subscriptionGroupIdentifier ?? "21000001"
        let transaction = SimTransaction(
            transactionId: id, originalTransactionId: id,
            webOrderLineItemId: isSubscription ? makeIdentifier() : nil,
            bundleId: bundleId, productId: request.productId, type: type, quantity: quantity,
            purchaseDate: context.now, originalPurchaseDate: context.now,
            expiresDate: isSubscription ? context.now + periodMillis : nil,
            appAccountToken: request.appAccountToken?.lowercased(), inAppOwnershipType: ownership,
            environment: environment, subscriptionGroupIdentifier: isSubscription ? group : nil,
            transactionReason: .purchase, currency: currency, price: price
        )
        store(transaction)
        var signedRenewalInfo: String?
        if isSubscription {
            let subscription = SimSubscription(
                originalTransactionId: id, productId: request.productId, autoRenewProductId: request.productId,
                periodMillis: periodMillis, subscriptionGroupIdentifier: group)
            store(subscription)
            signedRenewalInfo = try context.sign(subscription, latest: transaction)
        }
        let orderId = Self.makeOrderId()
        orders[orderId] = [id]
        receipt.originalTransactionIds.append(id)
        receipts[receipt.token] = receipt
        receiptOfOriginal[id] = receipt.token
        let notification =
            isSubscription
            ? try notify(.subscribed, .initialBuy, about: transaction, context: context)
            : try notify(.oneTimeCharge, nil, about: transaction, context: context)
        return PurchaseOutcome(
            transaction: transaction, receipt: try context.appReceipt(receipt, in: self), orderId: orderId,
            signedTransaction: try context.sign(transaction),
            signedRenewalInfo: signedRenewalInfo, notification: notification)
    }

    private func receiptForPurchase(
        _ raw: String?, environment: AppStoreEnvironment, bundleId: String, now: Int64
    ) throws(SimError) -> SimReceipt {
        guard let raw else {
            return SimReceipt(
                token: SimReceiptToken.make(environment: environment), environment: environment,
                bundleId: bundleId, creationDate: now, originalTransactionIds: [])
        }
        guard let token = SimReceiptToken.normalize(raw), let existing = receipts[token] else {
            throw SimError(.notFound, "receipt_not_found", "receipt is not one the simulator issued")
        }
        guard existing.environment == environment, existing.bundleId == bundleId else {
            throw .invalid("the receipt belongs to another environment or bundle ID")
        }
        return existing
    }
}
