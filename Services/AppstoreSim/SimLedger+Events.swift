import AppStore
import Foundation
import HTTPTypes

extension SimLedger {
    /// Applies an App Store event to the transaction it names and records Apple's notification.
    mutating func apply(_ request: EventRequest, context: SimContext) throws(SimError) -> EventOutcome {
        let type = NotificationTypeV2(rawValue: request.type)
        let subtype = request.subtype.map(NotificationSubtype.init(rawValue:))
        let target = try transaction(request.transactionId)
        var consumptionReason: ConsumptionRequestReason?
        var sentSubtype = subtype
        let about: SimTransaction
        switch type {
        case .didRenew:
            try allow(subtype, [.billingRecovery], for: type)
            (about, sentSubtype) = try renew(target, subtype: subtype, seconds: request.expiresInSeconds, context: context)
        case .subscribed:
            try allow(subtype, [.resubscribe], for: type)
            about = try resubscribe(target, seconds: request.expiresInSeconds, context: context)
            sentSubtype = .resubscribe
        case .refund, .revoke:
            try allow(subtype, [], for: type)
            about = try revoke(
                target, family: type == .revoke, reason: request.revocationReason,
                percentage: request.revocationPercentage, context: context)
        case .refundReversed:
            try allow(subtype, [], for: type)
            about = try reverseRefund(target, context: context)
        case .expired:
            try allow(subtype, [.voluntary, .billingRetry, .priceIncrease, .productNotForSale], for: type)
            sentSubtype = subtype ?? .voluntary
            about = try expire(target, subtype: sentSubtype ?? .voluntary, context: context)
        case .didFailToRenew:
            try allow(subtype, [.gracePeriod], for: type)
            about = try failToRenew(target, grace: subtype == .gracePeriod, seconds: request.gracePeriodSeconds, context: context)
        case .gracePeriodExpired:
            try allow(subtype, [], for: type)
            about = try endGracePeriod(target, context: context)
        case .didChangeRenewalStatus:
            guard let subtype, [.autoRenewEnabled, .autoRenewDisabled].contains(subtype) else {
                throw .invalid("DID_CHANGE_RENEWAL_STATUS needs subtype AUTO_RENEW_ENABLED or AUTO_RENEW_DISABLED")
            }
            about = try changeSubscription(target) { $0.autoRenewStatus = subtype == .autoRenewEnabled ? .on : .off }
        case .didChangeRenewalPref:
            try allow(subtype, [.upgrade, .downgrade], for: type)
            guard let productId = request.productId, !productId.isEmpty else {
                throw .invalid("DID_CHANGE_RENEWAL_PREF needs productId, the product to renew to")
            }
            about = try changeSubscription(target) { $0.autoRenewProductId = productId }
        case .renewalExtended:
            try allow(subtype, [], for: type)
            about = try extend(target, days: request.extendByDays ?? 7)
        case .consumptionRequest:
            try allow(subtype, [], for: type)
            let reason = ConsumptionRequestReason(rawValue: request.reason ?? "UNINTENDED_PURCHASE")
            if case .unknown = reason {
                throw .invalid("reason must be UNINTENDED_PURCHASE, FULFILLMENT_ISSUE, UNSATISFIED_WITH_PURCHASE, LEGAL or OTHER")
            }
            consumptionReason = reason
            about = target
        case .refundDeclined, .offerRedeemed:
            about = target
        case .priceIncrease:
            try allow(subtype, [.pending, .accepted], for: type)
            sentSubtype = subtype ?? .pending
            about = try subscriptionLatest(target)
        default:
            throw .invalid("unsupported event type '\(request.type)'")
        }
        let notification =
            request.notify == false
            ? nil : try notify(type, sentSubtype, about: about, consumptionRequestReason: consumptionReason, context: context)
        return EventOutcome(transaction: about, signedTransaction: try context.sign(about), notification: notification)
    }

    private func allow(_ subtype: NotificationSubtype?, _ allowed: [NotificationSubtype], for type: NotificationTypeV2) throws(SimError) {
        guard let subtype else { return }
        guard allowed.contains(subtype) else {
            let list = allowed.map(\.rawValue).joined(separator: ", ")
            throw .invalid("\(type.rawValue) takes \(list.isEmpty ? "no subtype" : "subtype " + list), not \(subtype.rawValue)")
        }
    }

    /// The subscription of an auto-renewable transaction, or a 400.
    private func subscription(of transaction: SimTransaction) throws(SimError) -> SimSubscription {
        guard transaction.isAutoRenewable, let subscription = subscriptions[transaction.originalTransactionId] else {
            throw SimError(
                .badRequest, "not_a_subscription", "transaction \(transaction.transactionId) is not an auto-renewable subscription")
        }
        return subscription
    }

    private func subscriptionLatest(_ transaction: SimTransaction) throws(SimError) -> SimTransaction {
        _ = try subscription(of: transaction)
        return latest(of: transaction.originalTransactionId) ?? transaction
    }

    private mutating func changeSubscription(_ transaction: SimTransaction, _ change: (inout SimSubscription) -> Void) throws(SimError)
        -> SimTransaction
    {
        var subscription = try subscription(of: transaction)
        change(&subscription)
        store(subscription)
        return latest(of: transaction.originalTransactionId) ?? transaction
    }

    private mutating func newPeriod(
        after latest: SimTransaction, subscription: SimSubscription, seconds: Int64?, reason: TransactionReason, context: SimContext
    ) throws(SimError) -> SimTransaction {
        var period = subscription.periodMillis
        if let seconds {
            guard (1...(10 * 366 * 86_400)).contains(seconds) else { throw .invalid("expiresInSeconds must be between 1 and 10 years") }
            period = seconds * 1000
        }
        var next = latest
        next.transactionId = makeIdentifier()
        next.webOrderLineItemId = makeIdentifier()
        next.productId = subscription.autoRenewProductId
        next.purchaseDate = context.now
        next.expiresDate = max(context.now, reason == .renewal ? (latest.expiresDate ?? context.now) : context.now) + period
        next.revocationDate = nil
        next.revocationReason = nil
        next.revocationType = nil
        next.revocationPercentage = nil
        next.transactionReason = reason
        store(next)
        var renewed = subscription
        renewed.productId = subscription.autoRenewProductId
        renewed.status = .active
        renewed.autoRenewStatus = .on
        renewed.isInBillingRetryPeriod = false
        renewed.gracePeriodExpiresDate = nil
        renewed.expirationIntent = nil
        store(renewed)
        return next
    }

    private mutating func renew(
        _ target: SimTransaction, subtype: NotificationSubtype?, seconds: Int64?, context: SimContext
    ) throws(SimError) -> (SimTransaction, NotificationSubtype?) {
        let subscription = try subscription(of: target)
        guard let latest = latest(of: target.originalTransactionId) else { throw .transactionNotFound(target.transactionId) }
        switch subscription.status {
        case .expired, .revoked:
            throw SimError(.conflict, "invalid_state", "the subscription has ended; use SUBSCRIBED with subtype RESUBSCRIBE")
        default:
            break
        }
        let recovering = subscription.isInBillingRetryPeriod
        let next = try newPeriod(after: latest, subscription: subscription, seconds: seconds, reason: .renewal, context: context)
        return (next, subtype ?? (recovering ? .billingRecovery : nil))
    }

    private mutating func resubscribe(_ target: SimTransaction, seconds: Int64?, context: SimContext) throws(SimError) -> SimTransaction {
        let subscription = try subscription(of: target)
        guard let latest = latest(of: target.originalTransactionId) else { throw .transactionNotFound(target.transactionId) }
        guard subscription.status == .expired || subscription.status == .revoked else {
            throw SimError(.conflict, "invalid_state", "the subscription has not ended; RESUBSCRIBE applies to ended subscriptions")
        }
        return try newPeriod(after: latest, subscription: subscription, seconds: seconds, reason: .purchase, context: context)
    }

    private mutating func revoke(
        _ target: SimTransaction, family: Bool, reason: Int?, percentage: Int?, context: SimContext
    ) throws(SimError) -> SimTransaction {
        guard target.revocationDate == nil else {
            throw SimError(.conflict, "invalid_state", "transaction \(target.transactionId) is already refunded or revoked")
        }
        guard reason == nil || reason == 0 || reason == 1 else { throw .invalid("revocationReason must be 0 or 1") }
        guard percentage.map({ (0...100_000).contains($0) }) ?? true, !(family && percentage != nil) else {
            throw .invalid("revocationPercentage must be 0 to 100000, on REFUND only")
        }
        var revoked = target
        revoked.revocationDate = context.now
        revoked.revocationReason = RevocationReason(rawValue: reason ?? 0)
        if let percentage, percentage < 100_000 {
            revoked.revocationType = .refundProrated
            revoked.revocationPercentage = percentage
        } else {
            revoked.revocationType = family ? .familyRevoke : .refundFull
            revoked.revocationPercentage = family ? nil : 100_000
        }
        store(revoked)
        if revoked.isAutoRenewable, var subscription = subscriptions[target.originalTransactionId],
            latest(of: target.originalTransactionId)?.transactionId == target.transactionId
        {
            subscription.status = .revoked
            subscription.autoRenewStatus = .off
            store(subscription)
        }
        return revoked
    }

    private mutating func reverseRefund(_ target: SimTransaction, context: SimContext) throws(SimError) -> SimTransaction {
        guard target.revocationDate != nil else {
            throw SimError(.conflict, "invalid_state", "transaction \(target.transactionId) is not refunded")
        }
        var restored = target
        restored.revocationDate = nil
        restored.revocationReason = nil
        restored.revocationType = nil
        restored.revocationPercentage = nil
        store(restored)
        if restored.isAutoRenewable, var subscription = subscriptions[target.originalTransactionId],
            latest(of: target.originalTransactionId)?.transactionId == target.transactionId
        {
            subscription.status = (restored.expiresDate ?? 0) > context.now ? .active : .expired
            store(subscription)
        }
        return restored
    }

    /// Ends the current period now if it has not ended yet, so that the state is consistent.
    private mutating func endPeriod(_ target: SimTransaction, now: Int64) throws(SimError) -> SimTransaction {
        guard var latest = latest(of: target.originalTransactionId) else { throw .transactionNotFound(target.transactionId) }
        if let expires = latest.expiresDate, expires > now {
            latest.expiresDate = now
            store(latest)
        }
        return latest
    }

    private mutating func expire(_ target: SimTransaction, subtype: NotificationSubtype, context: SimContext) throws(SimError)
        -> SimTransaction
    {
        var subscription = try subscription(of: target)
        let latest = try endPeriod(target, now: context.now)
        subscription.status = .expired
        subscription.autoRenewStatus = .off
        subscription.isInBillingRetryPeriod = false
        subscription.gracePeriodExpiresDate = nil
        switch subtype {
        case .billingRetry: subscription.expirationIntent = .billingError
        case .priceIncrease: subscription.expirationIntent = .customerDidNotConsentToPriceIncrease
        case .productNotForSale: subscription.expirationIntent = .productNotAvailable
        default: subscription.expirationIntent = .customerCancelled
        }
        store(subscription)
        return latest
    }

    private mutating func failToRenew(_ target: SimTransaction, grace: Bool, seconds: Int64?, context: SimContext) throws(SimError)
        -> SimTransaction
    {
        var subscription = try subscription(of: target)
        guard subscription.status == .active else {
            throw SimError(.conflict, "invalid_state", "only an active subscription can fail to renew")
        }
        let latest = try endPeriod(target, now: context.now)
        subscription.isInBillingRetryPeriod = true
        subscription.expirationIntent = .billingError
        if grace {
            let graceSeconds = seconds ?? 16 * 86_400
            guard (1...(60 * 86_400)).contains(graceSeconds) else { throw .invalid("gracePeriodSeconds must be between 1 and 60 days") }
            subscription.status = .billingGracePeriod
            subscription.gracePeriodExpiresDate = (latest.expiresDate ?? context.now) + graceSeconds * 1000
        } else {
            subscription.status = .billingRetry
        }
        store(subscription)
        return latest
    }

    private mutating func endGracePeriod(_ target: SimTransaction, context: SimContext) throws(SimError) -> SimTransaction {
        var subscription = try subscription(of: target)
        guard subscription.status == .billingGracePeriod else {
            throw SimError(.conflict, "invalid_state", "the subscription is not in a billing grace period")
        }
        subscription.status = .billingRetry
        subscription.gracePeriodExpiresDate = min(subscription.gracePeriodExpiresDate ?? context.now, context.now)
        store(subscription)
        return latest(of: target.originalTransactionId) ?? target
    }

    private mutating func extend(_ target: SimTransaction, days: Int) throws(SimError) -> SimTransaction {
        _ = try subscription(of: target)
        guard (1...90).contains(days) else { throw .invalid("extendByDays must be between 1 and 90") }
        guard var latest = latest(of: target.originalTransactionId) else { throw .transactionNotFound(target.transactionId) }
        latest.expiresDate = (latest.expiresDate ?? 0) + Int64(days) * 86_400_000
        store(latest)
        return latest
    }
}
