import Foundation
import Logging
import Pipeline
import Redis

/// `verifier reconcile [--since DATE] [--dry-run]` (what `tollctl reconcile` runs): one reconcile pass now,
/// with the verifier's own settings from the environment, printing one line per notification enqueued or
/// subscription corrected, then the summary (``ReconcileReport/summary(dryRun:)``). It takes the fleet's lease
/// like a scheduled pass (`error: lease_held: …` when a pass is running). `--since` reads Apple's history from
/// that date (ISO 8601 `2026-11-01`, `2026-11-01T08:00:00Z`, or milliseconds since 1970) without moving the
/// checkpoint. `--dry-run` sends Redis only reads: no lease, no function load, no rate-limit bucket, nothing
/// enqueued. Exit status 0 on success; otherwise `error: <code>: <message>` on stderr and 1.
enum ReconcileOnce {
    struct Arguments {
        var since: Date?
        var dryRun = false
    }

    static func main(arguments: [String]) async -> Int32 {
        do {
            let parsed = try parse(arguments)
            let configuration = try VerifierConfiguration(environment: ProcessInfo.processInfo.environment)
            configuration.shared.bootstrapLogging(ceiling: .warning)
            let logger = Logger(label: "verifier.reconcile")
            let report = try await run(configuration: configuration, arguments: parsed, logger: logger)
            for line in report.lines { print(line) }
            for line in report.summary(dryRun: parsed.dryRun) { print(line) }
            return 0
        } catch let error as ReconcileError {
            return fail(error.code, error.message)
        } catch let error as PipelineError {
            return fail(error.code, error.message)
        } catch let error as RedisError {
            return fail(error.code, error.description)
        } catch {
            return fail("reconcile_failed", "\(error)")
        }
    }

    /// Runs one pass (under the lease unless it is a dry run).
    static func run(configuration: VerifierConfiguration, arguments: Arguments, logger: Logger) async throws -> ReconcileReport {
        let metrics = VerifierMetrics()
        let (signedData, receipts, apiClients) = try App.appleClients(configuration, metrics: metrics)
        guard !apiClients.isEmpty || configuration.sharedSecret != nil else {
            throw ReconcileError("api_not_configured", """
                reconciling needs an App Store Server API key (TOLLGATE_API_KEY_ID, TOLLGATE_API_ISSUER_ID, \
                TOLLGATE_API_PRIVATE_KEY_PATH) or, for receipts only, TOLLGATE_SHARED_SECRET
                """)
        }
        let redis = try await configuration.shared.connectOne(
            clientName: "verifier-reconcile", logger: logger, commandTimeout: .seconds(10))
        defer { redis.close() }
        let reconciler = Reconciler(context: ReconcileContext(
            configuration: configuration, signedData: signedData, receipts: receipts, apiClients: apiClients,
            redis: redis, clock: .system, dryRun: arguments.dryRun, metrics: metrics, logger: logger))
        if arguments.dryRun {
            return try await reconciler.pass(since: arguments.since, token: nil)
        }
        try await ReconcileFunctions.load(on: redis)
        try await RateLimitFunctions.load(on: redis)
        return try await reconciler.lease.withLease { token in
            try await reconciler.pass(since: arguments.since, token: token)
        }
    }

    static func parse(_ arguments: [String]) throws(ReconcileError) -> Arguments {
        var parsed = Arguments()
        var index = 0
        while index < arguments.count {
            switch arguments[index] {
            case "--dry-run":
                parsed.dryRun = true
            case "--since":
                guard index + 1 < arguments.count, let date = parseDate(arguments[index + 1]) else {
                    throw ReconcileError(
                        "invalid_argument", "--since needs a date: 2026-11-01, 2026-11-01T08:00:00Z or milliseconds since 1970")
                }
                parsed.since = date
                index += 1
            default:
                throw ReconcileError(
                    "invalid_argument", "unknown argument \(arguments[index]); usage: reconcile [--since DATE] [--dry-run]")
            }
            index += 1
        }
        return parsed
    }

    /// `2026-11-01`, `2026-11-01T08:00:00Z` (or with an offset, or fractional seconds), or milliseconds.
    static func parseDate(_ text: String) -> Date? {
        if let milliseconds = Int64(text), milliseconds > 0 { return Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
        let full = ISO8601DateFormatter()
        if let date = full.date(from: text) { return date }
        full.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = full.date(from: text) { return date }
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        return day.date(from: text)
    }

    private static func fail(_ code: String, _ message: String) -> Int32 {
        FileHandle.standardError.write(Data("error: \(code): \(message)\n".utf8))
        return 1
    }
}
