import AppStore
import Foundation
import Logging
import Pipeline
import Redis
import ServiceLifecycle

/// Gap repair, as a `Service` in every verifier replica: once per ``ReconcilerConfiguration/interval``
/// (fleet-wide, from the last successful pass recorded in ``Keys/reconcileStatus``) one replica takes the
/// ``ReconcileLease`` and runs a pass: ``NotificationReconciler`` for each environment with an API client,
/// then ``SubscriptionSweeper``. The others find the lease held or the pass recent and sleep. A failed pass
/// (Apple unavailable, lease lost) is tried again after a shorter pause; its checkpoint stands where the last
/// enqueued page left it.
package final class Reconciler: Service {
    let context: ReconcileContext
    let lease: ReconcileLease

    package init(context: ReconcileContext) {
        self.context = context
        lease = ReconcileLease(
            redis: context.redis, key: context.keys.reconcileLease, ttl: context.configuration.reconcile.lease)
    }

    var settings: ReconcilerConfiguration { context.configuration.reconcile }

    package func run() async throws {
        var pause = settings.startDelay
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            if pause > .zero {
                let sleep = pause
                do {
                    try await cancelWhenGracefulShutdown { try await Task.sleep(for: sleep) }
                } catch {
                    return
                }
            }
            // A pass stops at shutdown; its checkpoint stands at the last page it enqueued.
            pause = await cancelWhenGracefulShutdown { await self.step() }
        }
    }

    /// One wake-up: runs a pass when one is due; returns how long to sleep.
    func step() async -> Duration {
        let jitter = Duration.milliseconds(Int64.random(in: 0...max(1, min(1000, settings.interval.milliseconds / 10))))
        do {
            let wait = try await timeUntilDue()
            if wait > .zero { return wait + jitter }
            let report = try await lease.withLease { token in
                // Another replica may have finished a pass while this one waited for the lease.
                guard try await self.timeUntilDue() <= .zero else { return ReconcileReport?.none }
                return try await self.pass(since: nil, token: token)
            }
            if let report {
                context.logger.info(
                    "Reconcile pass done",
                    metadata: [
                        "found": "\(report.found)", "enqueued": "\(report.enqueued)", "due": "\(report.due)",
                        "corrected": "\(report.corrected)", "failed": "\(report.failed)",
                    ])
            }
            return settings.interval + jitter
        } catch let error as VerificationError where error.code == VerificationError.leaseHeld.code {
            return min(settings.interval, settings.lease / 2) + jitter
        } catch is CancellationError {
            return .zero
        } catch {
            context.metrics.reconcilePass(succeeded: false, atMilliseconds: context.clock.nowMilliseconds())
            context.logger.warning("Reconcile pass failed; will try again", metadata: ["error": "\(error)"])
            return min(settings.interval, .seconds(60)) + jitter
        }
    }

    /// How long until the next fleet-wide pass is due (zero or less: now).
    func timeUntilDue() async throws -> Duration {
        guard let last = try await context.redis.send("HGET", key: context.keys.reconcileStatus, "pass.at").int else { return .zero }
        return .milliseconds(last + settings.interval.milliseconds - context.clock.nowMilliseconds())
    }

    /// One pass: every environment's notifications, then the sweep. `token` is the lease holder's (nil: dry
    /// run, nothing written); `since` reads that window instead of the cursor's.
    func pass(since: Date?, token: String?) async throws -> ReconcileReport {
        var report = ReconcileReport()
        let notifications = NotificationReconciler(context: context)
        for environment in context.environments {
            for app in context.apps(in: environment) {
                try await notifications.run(environment: environment, app: app, since: since, lease: token, report: &report)
            }
        }
        if let token {
            let added = try await SweepIndexBackfill(context: context).runOnce(lease: token)
            if added > 0 { report.note("sweep index backfilled with \(added) subscriptions") }
        }
        try await SubscriptionSweeper(context: context).run(report: &report)
        let now = context.clock.nowMilliseconds()
        if let token {
            guard
                try await ReconcileFunctions.write(
                    on: context.redis, lease: context.keys.reconcileLease, token: token, hash: context.keys.reconcileStatus,
                    fields: [
                        ("pass.at", String(now)), ("pass.found", String(report.found)),
                        ("pass.enqueued", String(report.enqueued)), ("pass.corrected", String(report.corrected)),
                    ])
            else { throw VerificationError.leaseLost }
            context.metrics.reconcilePass(succeeded: true, atMilliseconds: now)
        }
        return report
    }
}
