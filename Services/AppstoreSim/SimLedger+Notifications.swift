import AppStore
import AppStoreTesting
import Foundation
import HTTPTypes

extension SimLedger {
    /// Makes, signs and records the V2 notification Apple would send about `transaction` (its
    /// subscription's renewal info and status included for auto-renewable subscriptions).
    mutating func notify(
        _ type: NotificationTypeV2, _ subtype: NotificationSubtype?, about transaction: SimTransaction,
        consumptionRequestReason: ConsumptionRequestReason? = nil, context: SimContext
    ) throws(SimError) -> SimNotification {
        var data = NotificationData(
            appAppleId: context.configuration.appAppleId(for: transaction.bundleId), bundleId: transaction.bundleId, bundleVersion: "1",
            environment: transaction.environment, signedTransactionInfo: try context.sign(transaction),
            consumptionRequestReason: consumptionRequestReason
        )
        if transaction.isAutoRenewable, let subscription = subscriptions[transaction.originalTransactionId] {
            let latest = latest(of: transaction.originalTransactionId) ?? transaction
            data.signedRenewalInfo = try context.sign(subscription, latest: latest)
            data.status = subscription.status
        }
        return try record(
            ResponseBodyV2DecodedPayload(
                notificationType: type, subtype: subtype, notificationUUID: UUID().uuidString.lowercased(),
                data: data, version: "2.0", signedDate: context.now),
            environment: transaction.environment, bundleId: transaction.bundleId,
            transaction: transaction, context: context)
    }

    /// Records Apple's `TEST` notification for the app.
    mutating func notifyTest(environment: AppStoreEnvironment, bundleId: String, context: SimContext) throws(SimError) -> SimNotification {
        let data = NotificationData(
            appAppleId: context.configuration.appAppleId(for: bundleId), bundleId: bundleId, bundleVersion: "1", environment: environment)
        var notification = try record(
            ResponseBodyV2DecodedPayload(
                notificationType: .test, notificationUUID: UUID().uuidString.lowercased(), data: data,
                version: "2.0", signedDate: context.now),
            environment: environment, bundleId: bundleId, transaction: nil, context: context)
        let token = UUID().uuidString.lowercased() + "_" + String(context.now)
        notification.testNotificationToken = token
        update(notification: notification.notificationUUID) { $0.testNotificationToken = token }
        return notification
    }

    /// Records Apple's `RESCIND_CONSENT` notification: `appData` with the app transaction of the customer's
    /// download, signed like every other nested JWS.
    mutating func notifyRescindConsent(
        _ request: RescindConsentRequest, context: SimContext
    ) throws(SimError) -> (notification: SimNotification, appTransactionId: String) {
        let environment = try SimEnvironment.parse(request.environment)
        let bundleId = request.bundleId ?? context.configuration.bundleId
        guard !bundleId.isEmpty, bundleId.count <= 255 else { throw .invalid("bundleId must be 1-255 characters") }
        let appTransactionId = request.appTransactionId ?? String(context.now) + String(Int.random(in: 100_000...999_999))
        guard !appTransactionId.isEmpty, appTransactionId.count <= 64 else {
            throw .invalid("appTransactionId must be 1-64 characters")
        }
        let app = AppTransaction(
            receiptType: environment, appAppleId: context.configuration.appAppleId(for: bundleId), bundleId: bundleId,
            applicationVersion: "1", originalPurchaseDate: context.now - 86_400_000, appTransactionId: appTransactionId,
            signedDate: context.now)
        let signedApp: String
        do {
            signedApp = try context.signer.sign(app)
        } catch {
            throw SimError(.internalServerError, "signing_failed", "the app transaction could not be signed")
        }
        let appData = AppData(
            appAppleId: context.configuration.appAppleId(for: bundleId), bundleId: bundleId, environment: environment,
            signedAppTransactionInfo: signedApp)
        let notification = try record(
            ResponseBodyV2DecodedPayload(
                notificationType: .rescindConsent, notificationUUID: UUID().uuidString.lowercased(), appData: appData,
                version: "2.0", signedDate: context.now),
            environment: environment, bundleId: bundleId, transaction: nil, context: context)
        return (notification, appTransactionId)
    }

    private mutating func record(
        _ payload: ResponseBodyV2DecodedPayload, environment: AppStoreEnvironment, bundleId: String,
        transaction: SimTransaction?, context: SimContext
    ) throws(SimError) -> SimNotification {
        let signed: String
        do {
            signed = try context.signer.sign(payload)
        } catch {
            throw SimError(.internalServerError, "signing_failed", "the notification could not be signed")
        }
        let notification = SimNotification(
            notificationUUID: payload.notificationUUID ?? UUID().uuidString.lowercased(),
            type: payload.notificationType ?? .test, subtype: payload.subtype, signedPayload: signed,
            signedDate: context.now, environment: environment, bundleId: bundleId,
            transactionId: transaction?.transactionId, originalTransactionId: transaction?.originalTransactionId,
            delivery: context.configuration.notifyURL == nil ? .disabled : .pending
        )
        append(notification)
        return notification
    }
}
