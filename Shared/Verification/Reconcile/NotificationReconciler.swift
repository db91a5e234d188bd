import AppStore
import Foundation
import Ledger
import Logging
import Pipeline
import Redis

/// The notification half of a reconcile pass: pages Apple's Get Notification History for one environment
/// from the checkpoint (less ``ReconcilerConfiguration/overlap``; first run ``ReconcilerConfiguration/lookback``
/// back) to now, and enqueues every notification the ledger has not applied as a `notification.v2` job with
/// source `reconciler` — the same job Apple's webhook would have produced, verified and applied the same way.
///
/// Exactly once: a notification is skipped when its owner's ledger set (`tg:{u:<id>}:notifications`) has its
/// UUID; otherwise one atomic call enqueues it and sets its seen-marker (`SET NX`), so a second pass or a
/// second leader enqueues nothing; and should two copies reach the fulfiller anyway (a webhook retry racing
/// the reconciler), the ledger's notification set makes the second a `duplicate`.
///
/// The cursor (``Keys/reconcileCursor(environment:)``) records the open window and the next page token after
/// each page is enqueued, and moves `checkpoint` to the window's end only after the last page; every write is
/// fenced by the lease token. A manual `--since` pass leaves the cursor alone.
struct NotificationReconciler: Sendable {
    let context: ReconcileContext

    /// Apple answers a `CONSUMPTION_REQUEST` only within 12 hours.
    static let consumptionWindow: Int64 = 12 * 3_600_000
    /// Stay this far inside Apple's 180 days, for clock skew.
    static let historyMargin: Int64 = 60_000

    /// Runs the notification pass of `environment`. `lease` is the leader token (nil for a dry run, which writes
    /// nothing); `since` reads a manual window that does not touch the cursor. An interrupted window is finished
    /// first (from its stored page token), then a fresh one runs from its end (less the overlap) to now.
    func run(environment: AppStoreEnvironment, app: String, since: Date?, lease: String?, report: inout ReconcileReport) async throws {
        let settings = context.configuration.reconcile
        let now = context.clock.nowMilliseconds()
        let floor = now - settings.historyLimitMilliseconds + Self.historyMargin
        // Each app has its own history (asked with its own key), so its own cursor; the default app's keeps the name it
        // had before there were several.
        let cursorKey = context.keys.reconcileCursor(
            environment: environment.rawValue, app: app == context.configuration.bundleId ? nil : app)
        if let since {
            let start = max(floor, Int64(since.timeIntervalSince1970 * 1000))
            try await read(environment, app, from: start, to: now, token: nil, cursor: nil, lease: nil, report: &report)
            return
        }
        let cursor = try await context.hash(cursorKey)
        let failures = settings.onlyFailures ? "1" : "0"
        let scheduled = lease != nil
        var from =
            Int64(cursor["checkpoint"] ?? "").map { $0 - settings.overlap.milliseconds }
            ?? now - settings.lookback.milliseconds
        if let open = Int64(cursor["window.start"] ?? ""), let close = Int64(cursor["window.end"] ?? ""),
            cursor["window.failures"] == failures
        {
            // Finish the open window; if its start slid out of Apple's 180 days, re-read it from the limit.
            let token = open >= floor ? cursor["page.token"].flatMap { $0.isEmpty ? nil : $0 } : nil
            try await read(
                environment, app, from: max(open, floor), to: close, token: token,
                cursor: scheduled ? cursorKey : nil, lease: lease, report: &report)
            from = close - settings.overlap.milliseconds
        }
        let start = max(floor, from)
        if scheduled {
            try await write(
                cursorKey, lease: lease,
                [
                    ("window.start", String(start)), ("window.end", String(now)), ("window.failures", failures),
                ], removing: ["page.token"])
        }
        try await read(
            environment, app, from: start, to: now, token: nil, cursor: scheduled ? cursorKey : nil,
            lease: lease, report: &report)
    }

    /// Reads one window page by page, enqueuing each page before recording its successor's token in `cursor`
    /// (when given) and, after the last page, moving `checkpoint` to the window's end.
    private func read(
        _ environment: AppStoreEnvironment, _ app: String, from start: Int64, to end: Int64, token first: String?, cursor: String?,
        lease: String?, report: inout ReconcileReport
    ) async throws {
        guard start < end else {
            if let cursor {
                try await write(
                    cursor, lease: lease, [("checkpoint", String(end))],
                    removing: ["window.start", "window.end", "window.failures", "page.token"])
            }
            return
        }
        let now = context.clock.nowMilliseconds()
        let request = NotificationHistoryRequest(
            startDate: Date(timeIntervalSince1970: Double(start) / 1000), endDate: Date(timeIntervalSince1970: Double(end) / 1000),
            onlyFailures: context.configuration.reconcile.onlyFailures ? true : nil)
        var token = first
        var restarted = false
        for _ in 0..<100_000 {
            let page: NotificationHistoryResponse
            do {
                page = try await context.callAPI(.notificationHistory, bundleId: app, environment: environment) {
                    try await $0.getNotificationHistoryPage(request, paginationToken: token)
                }
            } catch let error as AppStoreAPIError
                where token != nil && !restarted
                && (error.appleErrorCode == 4_000_014 || error.appleErrorCode == 4_000_017)
            {
                // Apple no longer knows the token: read the window again from its start (deduplicated).
                (token, restarted) = (nil, true)
                continue
            } catch let error as AppStoreAPIError {
                throw VerificationError("apple_unavailable", "Get Notification History (\(environment)): \(error)")
            }
            for item in page.notificationHistory ?? [] {
                try await handle(item, environment: environment, now: now, report: &report)
            }
            if page.hasMore == true, let next = page.paginationToken, !next.isEmpty {
                token = next
                if let cursor { try await write(cursor, lease: lease, [("page.token", next)]) }
            } else {
                if let cursor {
                    try await write(
                        cursor, lease: lease, [("checkpoint", String(end))],
                        removing: ["window.start", "window.end", "window.failures", "page.token"])
                }
                return
            }
        }
        throw VerificationError("apple_unavailable", "Get Notification History (\(environment)) kept saying hasMore")
    }

    /// Decides about one history item and enqueues it when the ledger lacks it.
    private func handle(
        _ item: NotificationHistoryResponseItem, environment: AppStoreEnvironment, now: Int64, report: inout ReconcileReport
    ) async throws {
        guard let signedPayload = item.signedPayload, let peek = NotificationPeek(signedPayload: signedPayload) else {
            report.found += 1
            report.skipped += 1
            return
        }
        guard report.handledNotifications.insert(peek.notificationUUID).inserted else { return }
        report.found += 1
        if peek.type == "TEST"
            || (peek.type == "CONSUMPTION_REQUEST" && (peek.signedDate ?? 0) < now - Self.consumptionWindow)
        {
            report.skipped += 1
            return
        }
        let keys = context.keys
        if let otid = peek.originalTransactionId, !otid.isEmpty,
            let owner = try await context.redis.send("GET", key: keys.binding(originalTransactionId: otid)).string, !owner.isEmpty,
            try await applied(peek.notificationUUID, owner: owner, keys: keys)
        {
            report.applied += 1
            return
        }
        // J: where Apple's own copy of this notification starts too (ingest), with its markers.
        let partition = keys.partition(ofNotification: peek.originalTransactionId, uuid: peek.notificationUUID) ?? .first
        let seenKey = keys.reconcileSeen(notificationUUID: peek.notificationUUID, partition: partition)
        if context.dryRun {
            if try await context.redis.send("EXISTS", key: seenKey).int == 1 {
                report.seen += 1
            } else {
                report.enqueued += 1
                report.note("would enqueue notification \(peek.notificationUUID) \(peek.type) (\(environment.rawValue))")
            }
            return
        }
        let body = try JSONEncoder().encode(["signedPayload": signedPayload])
        let job = Job(
            id: keys.newJobID(partition: partition), kind: .notificationV2, payload: Array(body), source: .reconciler,
            receivedAtMilliseconds: context.clock.nowMilliseconds())
        let result = try await ReconcileFunctions.enqueue(
            on: context.redis, keys: keys, job: job, partition: partition, seenKey: seenKey,
            seenTTLSeconds: context.configuration.reconcile.seenTTLSeconds)
        if result.created {
            report.enqueued += 1
            context.metrics.notificationRecovered(environment: environment.rawValue)
            report.note("enqueued notification \(peek.notificationUUID) \(peek.type) (\(environment.rawValue)) job=\(result.jobID)")
            context.logger.info(
                "Recovered a notification",
                metadata: [
                    "notification.uuid": "\(peek.notificationUUID)", "notification.type": "\(peek.type)", "job.id": "\(result.jobID)",
                ])
        } else {
            report.seen += 1
        }
    }

    /// Whether the ledger applied the notification for `owner`, on either side (a production deployment keeps sandbox
    /// notifications on the user's sandbox side, ``LedgerSide``).
    private func applied(_ uuid: String, owner: String, keys: Keys) async throws -> Bool {
        for side in LedgerSide.allCases
        where try await context.redis.send("SISMEMBER", key: keys.on(side).notifications(user: owner), uuid).int == 1 {
            return true
        }
        return false
    }

    private func write(_ key: String, lease: String?, _ fields: [(String, String)], removing: [String] = []) async throws {
        guard let lease else { return }
        guard
            try await ReconcileFunctions.write(
                on: context.redis, lease: context.keys.reconcileLease, token: lease, hash: key, fields: fields, removing: removing)
        else { throw VerificationError.leaseLost }
    }
}

extension ReconcilerConfiguration {
    var historyLimitMilliseconds: Int64 { Self.historyLimit.milliseconds }
}
