package import Foundation
package import Logging
import Pipeline
import Redis
import ServiceKit

/// One reconcile pass now (what `tollctl reconcile` runs), with the verifier's own settings: Apple's Notification
/// History from the checkpoint (or `since`, without moving the checkpoint), then the subscription sweep. It takes
/// the fleet's lease like a scheduled pass (``VerificationError`` `lease_held` when a pass is running). A dry run sends
/// Redis only reads: no lease, no function load, no rate-limit bucket, nothing enqueued.
package enum ReconcileOnce {
    package struct Arguments: Sendable {
        package var since: Date?
        package var dryRun = false

        package init(since: Date? = nil, dryRun: Bool = false) {
            self.since = since
            self.dryRun = dryRun
        }
    }

    /// Runs one pass (under the lease unless it is a dry run).
    package static func run(configuration: VerifierConfiguration, arguments: Arguments, logger: Logger) async throws -> ReconcileReport {
        let metrics = VerifierMetrics()
        let (signedData, receipts, apiClients) = try VerifierServices.appleClients(configuration, metrics: metrics)
        guard !apiClients.isEmpty || configuration.hasSharedSecret else {
            throw VerificationError(
                "api_not_configured",
                """
                reconciling needs an App Store Server API key (TOLLGATE_API_KEY_ID, TOLLGATE_API_ISSUER_ID, \
                TOLLGATE_API_PRIVATE_KEY_PATH) or, for receipts only, TOLLGATE_SHARED_SECRET
                """)
        }
        let redis = try await configuration.shared.connectOne(
            clientName: "verifier-reconcile", logger: logger, commandTimeout: .seconds(10))
        defer { redis.close() }
        let reconciler = Reconciler(
            context: ReconcileContext(
                configuration: configuration, signedData: signedData, receipts: receipts, apiClients: apiClients,
                redis: redis, clock: .system, dryRun: arguments.dryRun, metrics: metrics, logger: logger))
        if arguments.dryRun {
            return try await reconciler.pass(since: arguments.since, token: nil)
        }
        try await ReconcileFunctions.library.load(on: redis)
        try await RateLimitFunctions.library.load(on: redis)
        return try await reconciler.lease.withLease { token in
            try await reconciler.pass(since: arguments.since, token: token)
        }
    }

    /// `2026-11-01`, `2026-11-01T08:00:00Z` (or with an offset, or fractional seconds), or milliseconds.
    package static func parseDate(_ text: String) -> Date? {
        if let milliseconds = Int64(text), milliseconds > 0 { return Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
        let full = ISO8601DateFormatter()
        if let date = full.date(from: text) { return date }
        full.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = full.date(from: text) { return date }
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        return day.date(from: text)
    }
}
