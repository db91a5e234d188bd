import Foundation

/// What one reconcile pass found and did, for logs, metrics and `tollctl reconcile`.
package struct ReconcileReport: Sendable {
    /// Notifications read from Apple's history.
    package var found = 0
    /// …already applied by the ledger (its per-user notification set has the UUID).
    package var applied = 0
    /// …already enqueued by an earlier pass (seen-marker present).
    package var seen = 0
    /// …not worth enqueuing (`TEST`, a `CONSUMPTION_REQUEST` past Apple's 12-hour answer window, unreadable).
    package var skipped = 0
    /// …enqueued now (dry run: would be).
    package var enqueued = 0
    /// Subscriptions past their period (plus grace) without news.
    package var due = 0
    /// …looked up with Apple.
    package var checked = 0
    /// …whose answer differed from the ledger and went to the fulfiller (dry run: would).
    package var corrected = 0
    /// …that could not be looked up this pass.
    package var failed = 0
    /// The notifications this pass already decided about (windows may overlap).
    package var handledNotifications: Set<String> = []
    /// One line per notification enqueued or subscription corrected (at most ``maximumLines``).
    package private(set) var lines: [String] = []
    package static let maximumLines = 1000

    package mutating func note(_ line: String) {
        if lines.count < Self.maximumLines { lines.append(line) }
    }

    package mutating func merge(_ other: ReconcileReport) {
        found += other.found
        applied += other.applied
        seen += other.seen
        skipped += other.skipped
        enqueued += other.enqueued
        due += other.due
        checked += other.checked
        corrected += other.corrected
        failed += other.failed
        for line in other.lines { note(line) }
    }

    /// The summary lines `tollctl reconcile` prints after the detail lines.
    package func summary(dryRun: Bool) -> [String] {
        let verb = dryRun ? "would_enqueue" : "enqueued"
        let fix = dryRun ? "would_correct" : "corrected"
        return [
            "notifications found=\(found) applied=\(applied) seen=\(seen) skipped=\(skipped) \(verb)=\(enqueued)",
            "subscriptions due=\(due) checked=\(checked) \(fix)=\(corrected) failed=\(failed)",
        ]
    }
}
