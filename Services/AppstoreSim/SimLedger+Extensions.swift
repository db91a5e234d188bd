import AppStore
import Foundation

extension SimLedger {
    private static let dayMillis: Int64 = 86_400_000

    /// Extend a Subscription Renewal Date: the subscription's current period ends `extendByDays` later and Apple's
    /// `RENEWAL_EXTENDED` is recorded. The same request identifier again gets the first answer and changes
    /// nothing; an expired, revoked or billing-retry subscription is ineligible; two extensions a year at most.
    mutating func extendRenewal(
        originalTransactionId: String, _ request: ExtendRenewalDateRequest, bid: String, environment: AppStoreEnvironment,
        context: SimContext
    ) throws(APIErrorBody) -> (ExtendRenewalDateResponse, SimNotification?) {
        try Self.validate(days: request.extendByDays, reason: request.extendReasonCode, identifier: request.requestIdentifier)
        guard let latest = latest(of: originalTransactionId), latest.bundleId == bid, latest.environment == environment else {
            throw .originalTransactionIdNotFound
        }
        if let answer = extensionAnswers[request.requestIdentifier] { return (answer, nil) }
        let (extended, notification) = try extend(latest, days: request.extendByDays, context: context)
        let answer = ExtendRenewalDateResponse(
            originalTransactionId: originalTransactionId, webOrderLineItemId: extended.webOrderLineItemId, success: true,
            effectiveDate: extended.expiresDate)
        extensionAnswers[request.requestIdentifier] = answer
        return (answer, notification)
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers of one product: each eligible subscription is
    /// extended (with its `RENEWAL_EXTENDED`), each ineligible one counted as failed; the request is complete at
    /// once. The same product and request identifier again changes nothing.
    mutating func extendAllActive(
        _ request: MassExtendRenewalDateRequest, bid: String, environment: AppStoreEnvironment, context: SimContext
    ) throws(APIErrorBody) -> [SimNotification] {
        try Self.validate(days: request.extendByDays, reason: request.extendReasonCode, identifier: request.requestIdentifier)
        guard !request.productId.isEmpty, request.productId.count <= 255 else { throw .invalidProductId }
        let key = request.productId + "/" + request.requestIdentifier
        guard massExtensions[key] == nil else { return [] }
        var notifications: [SimNotification] = []
        var succeeded: Int64 = 0
        var failed: Int64 = 0
        let originals = subscriptions.values.filter { $0.productId == request.productId }.map(\.originalTransactionId).sorted()
        for original in originals {
            guard let latest = latest(of: original), latest.bundleId == bid, latest.environment == environment,
                (latest.expiresDate ?? 0) > context.now, latest.revocationDate == nil
            else { continue }
            do {
                let (_, notification) = try extend(latest, days: request.extendByDays, context: context)
                notifications.append(notification)
                succeeded += 1
            } catch {
                failed += 1
            }
        }
        massExtensions[key] = MassExtendRenewalDateStatusResponse(
            requestIdentifier: request.requestIdentifier, complete: true, completeDate: context.now,
            succeededCount: succeeded, failedCount: failed)
        return notifications
    }

    /// The customer's app transaction (the customer is everyone on the receipt holding `transaction`): its ID is
    /// stable for the customer, its original purchase a day before their first purchase.
    func appTransaction(of transaction: SimTransaction, context: SimContext) -> AppTransaction {
        let first = customerTransactions(of: transaction).min { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
        let oldest = first ?? transaction
        return AppTransaction(
            receiptType: transaction.environment, appAppleId: context.configuration.appAppleId(for: transaction.bundleId),
            bundleId: transaction.bundleId,
            applicationVersion: "1", originalPurchaseDate: oldest.purchaseDate - Self.dayMillis,
            appTransactionId: "70" + oldest.originalTransactionId, signedDate: context.now)
    }

    private mutating func extend(
        _ latest: SimTransaction, days: Int, context: SimContext
    ) throws(APIErrorBody) -> (SimTransaction, SimNotification) {
        let original = latest.originalTransactionId
        guard latest.isAutoRenewable, let subscription = subscriptions[original], subscription.status == .active,
            latest.revocationDate == nil, let expires = latest.expiresDate, expires > context.now
        else { throw .subscriptionExtensionIneligible }
        let recent = extensionDates[original, default: []].filter { $0 > context.now - 365 * Self.dayMillis }
        guard recent.count < 2 else { throw .subscriptionMaxExtension }
        var extended = latest
        extended.expiresDate = expires + Int64(days) * Self.dayMillis
        store(extended)
        extensionDates[original] = recent + [context.now]
        do {
            return (extended, try notify(.renewalExtended, nil, about: extended, context: context))
        } catch {
            throw .generalInternalRetryable
        }
    }

    private static func validate(days: Int, reason: Int, identifier: String) throws(APIErrorBody) {
        guard (1...90).contains(days) else { throw .invalidExtendByDays }
        guard (0...3).contains(reason) else { throw .invalidExtendReasonCode }
        guard UUID(uuidString: identifier) != nil else { throw .invalidRequestIdentifier }
    }
}
