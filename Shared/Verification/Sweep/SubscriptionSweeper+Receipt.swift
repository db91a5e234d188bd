import AppStore
import Foundation
import Logging
import Pipeline
import Redis

extension SubscriptionSweeper {
    /// The legacy path, when no App Store Server API key serves the subscription's environment: the user's
    /// latest receipt (``ReceiptReference``) goes to `verifyReceipt` again; the chain's transactions and renewal
    /// state from Apple's answer go to the fulfiller as a `receipt` event of the user when they differ from the
    /// ledger.
    func checkReceipt(_ due: Due, state: LedgerState, report: inout ReconcileReport) async throws {
        let stored = try await context.redis.send(
            "HGET", key: ReceiptReference.key(context.keys.inProject(due.project), user: due.user), "receipt"
        ).string
        guard let stored, !stored.isEmpty else {
            report.failed += 1
            try await postpone(due)
            return
        }
        let verification = await context.receipts.validate(stored)
        let receipt: ValidatedReceipt
        switch verification.result {
        case .verified(let value):
            receipt = value
        case .rejected(let failure):
            report.failed += 1
            context.logger.warning(
                "The stored receipt was refused",
                metadata: [
                    "user": "\(due.user)", "reason": "\(failure.code.rawValue)",
                ])
            try await postpone(due)
            return
        case .retryable(let failure):
            report.failed += 1
            throw VerificationError("apple_unavailable", "verifyReceipt: \(failure)")
        }
        guard context.configuration.accepts(receipt.environment) else {
            report.failed += 1
            try await postpone(due)
            return
        }
        let chain = receipt.transactions.filter { $0.originalTransactionId == state.originalTransactionId }
        guard let latest = chain.max(by: { ($0.expiresDate ?? 0) < ($1.expiresDate ?? 0) }) else {
            report.failed += 1
            try await postpone(due)
            return
        }
        let renewal = receipt.renewals.first { $0.originalTransactionId == state.originalTransactionId }
        let apple = VerifiedStatus(transaction: latest, renewal: renewal, environment: receipt.environment)
        guard differs(apple, from: state) else {
            try await postpone(due)
            return
        }
        try await correct(due, from: state.transactionId, apple: apple, report: &report) { jobId, now in
            PurchaseEvent(
                jobId: jobId, kind: .receipt, source: .reconciler, userId: due.user,
                environment: receipt.environment.rawValue, verifiedAt: now, transactions: chain,
                renewals: renewal.map { [$0] } ?? [])
        }
    }
}
