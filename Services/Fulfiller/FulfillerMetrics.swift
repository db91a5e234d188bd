import Ledger
import Metrics
import Pipeline

/// The fulfiller's metrics (the consumer runtime adds `tollgate_jobs_total{stream,outcome}` and friends;
/// the ledger function acks entries itself, which the runtime counts as `completed` or `duplicate`):
///
/// - `tollgate_ledger_events_total{outcome}` — fulfilled, rejected, duplicate, parked, acked_elsewhere, malformed
/// - `tollgate_ledger_transactions_total{result,side}` — applied, duplicate, refunded, refund_reversed, unknown_product,
///   trial_withheld…; `side` `primary` or `sandbox` (a production deployment's sandbox purchases, kept apart)
/// - `tollgate_ledger_fraud_signals_total{reason}` — owned_by_another_user, product_mismatch, offer_unsigned (a
///   promotional offer redeemed without a signature of Tollgate's; credited all the same)
/// - `tollgate_ledger_apply_duration_seconds` — resolve + function call per event
struct FulfillerMetrics: Sendable {
    /// Where they are recorded: the fulfiller's registry, handed in by its builder.
    let handles: MetricHandles

    init(handles: MetricHandles = MetricHandles()) {
        self.handles = handles
    }

    func record(_ outcome: LedgerOutcome, duration: Duration) {
        handles.counter("tollgate_ledger_events_total", [("outcome", outcome.outcome.rawValue)]).increment()
        let side = outcome.side ?? LedgerSide.primary.rawValue
        for transaction in outcome.transactions ?? [] {
            handles.counter("tollgate_ledger_transactions_total", [("result", transaction.result), ("side", side)])
                .increment()
            if transaction.result == "owned_by_another_user" { fraud("owned_by_another_user") }
        }
        if let reason = outcome.reason, reason == "product_mismatch" || reason == "owned_by_another_user",
            outcome.transactions == nil
        {
            fraud(reason)
        }
        for signal in outcome.signals ?? [] { fraud(signal) }
        let (seconds, attoseconds) = duration.components
        handles.timer("tollgate_ledger_apply_duration_seconds")
            .recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    func malformed() {
        handles.counter("tollgate_ledger_events_total", [("outcome", "malformed")]).increment()
    }

    private func fraud(_ reason: String) {
        handles.counter("tollgate_ledger_fraud_signals_total", [("reason", reason)]).increment()
    }
}
