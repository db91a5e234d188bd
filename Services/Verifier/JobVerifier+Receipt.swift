import AppStore
import Foundation
import Pipeline

extension JobVerifier {
    /// A legacy receipt: Apple's `verifyReceipt` (production first, sandbox on 21007 when allowed), every
    /// transaction of the answer and the renewal states into the event.
    func verifyReceipt(_ job: Job) async -> VerificationOutcome {
        let verification = await receipts.verify(text(of: job))
        return await VerificationOutcome.from(verification.result, retryAfter: verification.retryAfter) { receipt in
            if let failure = environmentFailure(receipt.environment) { return .rejected(failure) }
            await ReceiptReference.store(
                on: redis, keys: configuration.shared.keys, job: job, receipt: receipt, submitted: text(of: job),
                now: clock.nowMilliseconds(), logger: logger)
            return .verified(event(for: job, receipt: receipt, notification: nil))
        }
    }

    /// The event of a verified receipt (also a V1 notification's `unified_receipt`).
    func event(for job: Job, receipt: VerifiedReceipt, notification: PurchaseEventNotification?) -> PurchaseEvent {
        PurchaseEvent(
            job: job, environment: receipt.environment.rawValue, verifiedAt: clock.nowMilliseconds(),
            transactions: receipt.transactions.map(PurchaseEventTransaction.init(receipt:)),
            renewals: receipt.renewals.map(PurchaseEventRenewal.init(receipt:)),
            notification: notification)
    }

    /// A V1 notification: its `password` must equal the shared secret (constant time), its
    /// `unified_receipt` is normalized like a receipt answer.
    func verifyNotificationV1(_ job: Job) -> VerificationOutcome {
        guard let notification = try? JSONDecoder().decode(ServerNotificationV1.self, from: Data(job.payload)) else {
            return .rejected(VerificationFailure(.invalidFormat, "the V1 notification is not readable JSON"))
        }
        guard let secret = configuration.sharedSecret else {
            return .rejected(VerificationFailure(
                .sharedSecretMismatch, "no shared secret is configured (TOLLGATE_SHARED_SECRET), so V1 notifications cannot be authenticated"))
        }
        let result = ReceiptNormalizer.normalize(
            notification: notification, expectedBundleId: configuration.bundleId, sharedSecret: secret)
        switch result {
        case .verified(let receipt):
            if let failure = environmentFailure(receipt.environment) { return .rejected(failure) }
            return .verified(event(
                for: job, receipt: receipt,
                notification: PurchaseEventNotification(type: notification.notificationType, version: 1)))
        case .rejected(let failure):
            return .rejected(failure)
        case .retryable(let failure):
            return .retryable(failure, retryAfter: nil)
        }
    }
}
