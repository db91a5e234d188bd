package import Core

/// The reconciler's settings (part of ``VerifierConfiguration``, read by
/// `VerifierConfiguration+Reconcile.swift`). Durations accept `500ms`, `30s`, `10m`, `1h`, `2d`, or a plain
/// number of seconds.
///
/// Keys (defaults in brackets):
/// - `TOLLGATE_RECONCILE_ENABLED` — run the reconciler service [`true`; it also needs an API key]
/// - `TOLLGATE_RECONCILE_INTERVAL` — time between fleet-wide passes [`1h`]
/// - `TOLLGATE_RECONCILE_START_DELAY` — a replica's first look waits this long after it starts (a deploy
///   restarts every replica at once; let the pipeline settle first) [`1m`]
/// - `TOLLGATE_RECONCILE_ONLY_FAILURES` — ask Apple only for notifications it failed to deliver [`false`]
/// - `TOLLGATE_RECONCILE_LOOKBACK` — how far back the first pass reads, at most Apple's 180 days [`180d`]
/// - `TOLLGATE_RECONCILE_OVERLAP` — each pass re-reads this much before the checkpoint, for notifications
///   that reach Apple's history late (re-reads are deduplicated) [`10m`]
/// - `TOLLGATE_RECONCILE_LEASE` — the leader lease, renewed every third of it while a pass runs [`60s`]
/// - `TOLLGATE_SWEEP_GRACE` — how long after a subscription's period ended without news it is looked up [`1h`]
/// - `TOLLGATE_SWEEP_RECHECK` — when Apple's answer changed nothing, the next look is this much later [`24h`]
/// - `TOLLGATE_SWEEP_BATCH` — subscriptions looked up per pass at most [`500`]
package struct ReconcilerConfiguration: Sendable {
    package var enabled = true
    package var interval: Duration = .seconds(3600)
    package var startDelay: Duration = .seconds(60)
    package var onlyFailures = false
    package var lookback: Duration = .seconds(180 * 86_400)
    package var overlap: Duration = .seconds(600)
    package var lease: Duration = .seconds(60)
    package var sweepGrace: Duration = .seconds(3600)
    package var sweepRecheck: Duration = .seconds(86_400)
    package var sweepBatch = 500
    /// How long a recovered notification's seen-marker stays (longer than any retry schedule).
    package var seenTTLSeconds = 30 * 86_400
    /// Apple keeps notification history this long.
    package static let historyLimit: Duration = .seconds(180 * 86_400)

    package init() {}
}

extension ReconcilerConfiguration {
    /// Reads the keys listed on ``ReconcilerConfiguration``.
    package init(reader: EnvironmentReader) throws(ConfigurationError) {
        self.init()
        enabled = try reader.bool("TOLLGATE_RECONCILE_ENABLED", default: enabled)
        interval = try reader.duration("TOLLGATE_RECONCILE_INTERVAL", default: interval, minimum: .milliseconds(10))
        startDelay = try reader.duration("TOLLGATE_RECONCILE_START_DELAY", default: startDelay, minimum: .zero)
        onlyFailures = try reader.bool("TOLLGATE_RECONCILE_ONLY_FAILURES", default: onlyFailures)
        lookback = try reader.duration("TOLLGATE_RECONCILE_LOOKBACK", default: lookback, minimum: .seconds(1))
        guard lookback <= Self.historyLimit else {
            throw ConfigurationError(variable: "TOLLGATE_RECONCILE_LOOKBACK", problem: "must be at most 180d (Apple keeps 180 days)")
        }
        overlap = try reader.duration("TOLLGATE_RECONCILE_OVERLAP", default: overlap, minimum: .zero)
        lease = try reader.duration("TOLLGATE_RECONCILE_LEASE", default: lease, minimum: .milliseconds(300))
        sweepGrace = try reader.duration("TOLLGATE_SWEEP_GRACE", default: sweepGrace, minimum: .zero)
        sweepRecheck = try reader.duration("TOLLGATE_SWEEP_RECHECK", default: sweepRecheck, minimum: .milliseconds(10))
        sweepBatch = try reader.int("TOLLGATE_SWEEP_BATCH", default: sweepBatch, range: 1...100_000)
    }
}
