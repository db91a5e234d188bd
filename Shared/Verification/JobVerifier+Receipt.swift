import AppStore
import Foundation
import Pipeline
import ServiceKit

extension JobVerifier {
    /// A receipt, by the deployment's route (``ReceiptRouter``): Apple's `verifyReceipt` (production first,
    /// sandbox on 21007 when allowed), or the receipt proven offline and its purchases from the App Store Server
    /// API; every transaction and renewal state into the event. A user's receipt validated within
    /// `TOLLGATE_RECEIPT_MEMORY` is taken from ``ReceiptMemory`` without asking Apple; otherwise each call to Apple
    /// takes a token of the user's budget (``UserAppleBudget``).
    func verifyReceipt(_ job: Job) async -> VerificationOutcome {
        // Not trimmed: `ReceiptData` reads spaces at a receipt's ends as the `+` that form decoding made of them.
        let submitted = String(decoding: job.payload, as: UTF8.self)
        // The submitting user's keys are their project's (docs/PROJECTS.md).
        let keys = configuration.shared.keys.inProject(job.project)
        let memory: (user: String, receipt: [UInt8])? = job.userID.flatMap { user in
            guard !user.isEmpty, configuration.receiptMemory > .zero else { return nil }
            return (user, job.payload)
        }
        var remembered: ValidatedReceipt?
        if let memory { remembered = await ReceiptMemory.recall(on: redis, keys: keys, user: memory.user, receipt: memory.receipt) }
        let verification: ReceiptValidation
        if let remembered {
            verification = ReceiptValidation(.verified(remembered))
        } else {
            let gate = UserAppleBudget.gate(
                user: job.userID, callsPerHour: configuration.userAppleCallsPerHour, keys: keys, redis: redis)
            verification = await receipts.validate(submitted, gate: gate)
        }
        return await VerificationOutcome.from(verification.result, retryAfter: verification.retryAfter) { receipt in
            if let failure = environmentFailure(receipt.environment) { return .rejected(failure) }
            // Another project's receipt is refused (``placeProject(_:job:)``): nothing of it is kept under this user.
            guard configuration.project(ofApp: receipt.bundleId) == job.project || job.source != .client else {
                return .verified(event(for: job, receipt: receipt, notification: nil))
            }
            if remembered == nil, let memory {
                await ReceiptMemory.remember(
                    receipt, on: redis, keys: keys, user: memory.user, receipt: memory.receipt, lifetime: configuration.receiptMemory,
                    logger: logger)
            }
            await ReceiptReference.store(
                on: redis, keys: keys, job: job, receipt: receipt, submitted: submitted,
                now: clock.nowMilliseconds(), logger: logger)
            return .verified(event(for: job, receipt: receipt, notification: nil))
        }
    }

    /// The event of a verified receipt (also a V1 notification's `unified_receipt`).
    func event(for job: Job, receipt: ValidatedReceipt, notification: PurchaseEventNotification?) -> PurchaseEvent {
        var event = PurchaseEvent(
            job: job, environment: receipt.environment.rawValue, verifiedAt: clock.nowMilliseconds(),
            transactions: receipt.transactions, renewals: receipt.renewals, notification: notification)
        event.bundleId = receipt.bundleId
        return event
    }

    /// A V1 notification is a trigger, never evidence (docs/ARCHITECTURE.md, invariant 9): ingest checked its password
    /// and kept only its type, `bid`, `environment` and `latest_receipt`; Apple's `verifyReceipt` answer for that
    /// receipt is what the event carries. The notification's own transaction fields are never read (a job written by an
    /// older ingest still holds them, and the password: both are ignored).
    func verifyNotificationV1(_ job: Job) async -> VerificationOutcome {
        guard let notification = try? ServerNotificationV1.read(job.payload) else {
            return .rejected(VerificationFailure(.invalidFormat, "the V1 notification is not readable JSON"))
        }
        guard let latest = notification.latestReceipt else {
            return .rejected(VerificationFailure(.invalidFormat, "the V1 notification has no latest_receipt to ask Apple about"))
        }
        if let bid = notification.bid, configuration.app(bid) == nil {
            return .rejected(VerificationFailure(.wrongBundleID, "the V1 notification is for another app"))
        }
        let verification = await receipts.validate(latest)
        return await VerificationOutcome.from(verification.result, retryAfter: verification.retryAfter) { receipt in
            if let failure = environmentFailure(receipt.environment) { return .rejected(failure) }
            return .verified(
                event(
                    for: job, receipt: receipt,
                    notification: PurchaseEventNotification(type: notification.notificationType, version: 1)))
        }
    }
}
