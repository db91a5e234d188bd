import AppStore
import Core
import Foundation
import Ledger
import Logging
import Pipeline
import Redis

extension SubscriptionSweeper {
    /// What the ledger holds about a subscription: its latest transaction and renewal state.
    struct LedgerState: Sendable {
        var transactionId: String
        var originalTransactionId: String
        var expires: Int64?
        var autoRenew: String?
        var billingRetry: Bool
        var graceEnds: Int64?
    }

    /// Looks one due subscription up with Apple; emits Apple's verified answer when it differs from the ledger.
    func check(_ due: Due, report: inout ReconcileReport) async throws {
        let keys = context.keys.inProject(due.project)
        guard
            let transactionId = try await context.redis.send(
                "HGET", key: keys.subscriptionsDueReference(partition: due.partition), due.member
            )
            .string,
            !transactionId.isEmpty
        else {
            try await postpone(due)
            return
        }
        // The ledger side the member's environment is kept on (a production deployment's sandbox subscriptions on the
        // user's sandbox side).
        let side = LedgerSide.of(
            environment: due.environment.rawValue, deploymentIsProduction: context.configuration.environment == .production)
        let record = try await context.hash(keys.on(side).transaction(user: due.user, transactionId: transactionId))
        let meta =
            try await context.redis.send(
                RedisCommand(
                    "HMGET", key: keys.on(side).ledgerMeta(user: due.user), "r:\(due.entitlement):auto", "r:\(due.entitlement):retry",
                    "r:\(due.entitlement):grace")
            ).array ?? []
        let state = LedgerState(
            transactionId: transactionId, originalTransactionId: record["otid"] ?? transactionId,
            expires: record["expires"].flatMap { Int64($0) }, autoRenew: meta.first?.string,
            billingRetry: meta.count > 1 && meta[1].string == "1", graceEnds: meta.count > 2 ? meta[2].int : nil)
        report.checked += 1
        // The ledger does not say which app a subscription is of: each app's client is asked in turn (the default
        // first) until one knows it; Apple answers 404 for another app's transaction.
        // Only the apps of the subscription's project (docs/PROJECTS.md): another project's app is never asked.
        let apps = context.apps(in: due.environment).filter { context.configuration.project(ofApp: $0) == due.project }
        guard !apps.isEmpty else {
            try await checkReceipt(due, state: state, report: &report)
            return
        }

        var answer: (app: String, status: StatusResponse)?
        for (index, app) in apps.enumerated() {
            do {
                answer = (
                    app,
                    try await context.callAPI(.subscriptionStatus, bundleId: app, environment: due.environment) {
                        try await $0.getAllSubscriptionStatuses(transactionId: transactionId)
                    }
                )
                break
            } catch let error as AppStoreAPIError where error.httpStatus == 404 && index < apps.count - 1 {
                continue
            } catch let error as AppStoreAPIError {
                report.failed += 1
                context.logger.warning(
                    "Get All Subscription Statuses failed",
                    metadata: [
                        "transaction.id": "\(transactionId)", "error": "\(error.code.rawValue)",
                    ])
                if error.isRetryable { throw VerificationError("apple_unavailable", "Get All Subscription Statuses: \(error)") }
                try await postpone(due)
                return
            }
        }
        guard let (app, status) = answer else {
            try await postpone(due)
            return
        }
        let item = (status.data ?? []).flatMap { $0.lastTransactions ?? [] }
            .first { $0.originalTransactionId == state.originalTransactionId }
        guard let item, let verified = await verify(item, due: due) else {
            report.failed += 1
            try await postpone(due)
            return
        }
        guard differs(verified, from: state) else {
            try await postpone(due)
            return
        }
        try await correct(due, from: transactionId, apple: verified, report: &report) { jobId, now in
            var event = PurchaseEvent(
                jobId: jobId, kind: .transaction, source: .reconciler, environment: verified.environment.rawValue,
                verifiedAt: now, transactions: [verified.transaction], renewals: verified.renewal.map { [$0] } ?? [])
            event.bundleId = app
            return event
        }
    }

    /// Hands a correction to the fulfiller (a dry run only reports it) and lets it settle.
    func correct(
        _ due: Due, from transactionId: String, apple: VerifiedStatus, report: inout ReconcileReport,
        event makeEvent: (String, Int64) -> PurchaseEvent
    ) async throws {
        report.corrected += 1
        let expires = apple.transaction.expiresDate.map { Date(timeIntervalSince1970: Double($0) / 1000) }
        let line =
            "\(due.entitlement) user=\(due.user) (\(due.environment.rawValue)) transaction \(transactionId) -> "
            + "\(apple.transaction.transactionId) expires \(expires.map { ISO8601DateFormatter().string(from: $0) } ?? "-")"
        if context.dryRun {
            report.note("would correct subscription " + line)
            return
        }
        let now = context.clock.nowMilliseconds()
        let partition = context.keys.partition(ofUser: due.user)
        var event = makeEvent(context.keys.newJobID(partition: partition), now)
        // The fulfiller applies it to the project whose index held it (docs/PROJECTS.md).
        event.project = due.project.label
        try await ReconcileFunctions.emit(
            on: context.redis, keys: context.keys, event: event,
            deploymentIsProduction: context.configuration.environment == .production, partition: partition, nowMilliseconds: now)
        try await postpone(due, by: settleDelay)
        context.metrics.subscriptionCorrected(environment: due.environment.rawValue)
        report.note("corrected subscription " + line + " job=\(event.jobId)")
        context.logger.info(
            "Corrected a subscription from Apple's answer",
            metadata: [
                "transaction.id": "\(apple.transaction.transactionId)", "job.id": "\(event.jobId)",
            ])
    }

    /// Apple's latest transaction and renewal info of one subscription, both verified.
    struct VerifiedStatus: Sendable {
        var transaction: PurchaseEventTransaction
        var renewal: PurchaseEventRenewal?
        var environment: AppStoreEnvironment
    }

    /// Verifies the item's signed transaction and renewal info; nil (logged) when either fails.
    func verify(_ item: LastTransactionsItem, due: Due) async -> VerifiedStatus? {
        guard let signed = item.signedTransactionInfo,
            case .verified(let payload) = await context.signedData.verifyTransaction(signed),
            let transaction = PurchaseEventTransaction(signed: payload)
        else {
            context.logger.warning("Apple's subscription status did not verify", metadata: ["user": "\(due.user)"])
            return nil
        }
        let environment = payload.environment ?? due.environment
        guard context.configuration.accepts(environment) else { return nil }
        var renewal: PurchaseEventRenewal?
        if let signedRenewal = item.signedRenewalInfo {
            guard case .verified(let info) = await context.signedData.verifyRenewalInfo(signedRenewal) else {
                context.logger.warning("Apple's renewal info did not verify", metadata: ["user": "\(due.user)"])
                return nil
            }
            renewal = PurchaseEventRenewal(signed: info)
        }
        return VerifiedStatus(transaction: transaction, renewal: renewal, environment: environment)
    }

    /// Whether Apple's answer tells the ledger anything new.
    func differs(_ apple: VerifiedStatus, from ledger: LedgerState) -> Bool {
        if apple.transaction.transactionId != ledger.transactionId { return true }
        if apple.transaction.expiresDate != ledger.expires || apple.transaction.revocationDate != nil { return true }
        guard let renewal = apple.renewal else { return false }
        if let auto = renewal.autoRenewStatus, String(auto) != ledger.autoRenew { return true }
        if (renewal.isInBillingRetryPeriod ?? false) != ledger.billingRetry { return true }
        return renewal.gracePeriodExpiresDate != ledger.graceEnds
    }
}
