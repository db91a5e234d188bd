import Foundation
import Ledger
import Testing

extension SystemHarness {
    /// Polls the user's entitlements endpoint until `accept` holds (the ledger is eventually consistent with
    /// Apple's notifications), and returns that view. After `timeout`, records an issue naming `what`, with
    /// the last view and the tail of every service's log, and returns the last view.
    @discardableResult
    func awaitLedger(
        _ user: String, _ what: String, timeout: Duration = .seconds(30),
        sourceLocation: SourceLocation = #_sourceLocation, until accept: (EntitlementsView) -> Bool
    ) async throws -> EntitlementsView {
        let client = ingestClient
        let deadline = ContinuousClock.now + timeout
        var last = try await client.entitlements(user: user)
        while !accept(last) {
            guard ContinuousClock.now < deadline else {
                Issue.record(
                    "\(user): \(what) not reached within \(timeout); last \(Self.describe(last))\n\(logTail())",
                    sourceLocation: sourceLocation)
                return last
            }
            try await Task.sleep(for: .milliseconds(100))
            last = try await client.entitlements(user: user)
        }
        return last
    }

    /// Waits until the user has exactly `coins`.
    @discardableResult
    func awaitCoins(_ user: String, _ coins: Int64, sourceLocation: SourceLocation = #_sourceLocation) async throws -> EntitlementsView {
        try await awaitLedger(user, "coins == \(coins)", sourceLocation: sourceLocation) { $0.coins == coins }
    }

    /// Waits until `entitlement` is in `state` (and, when given, ends at `expiresAt` ms).
    @discardableResult
    func awaitEntitlement(
        _ user: String, _ entitlement: String, _ state: String, expiresAt: Int64? = nil, autoRenew: Bool? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> EntitlementsView {
        let expected = expiresAt.map(Self.iso8601)
        let what = "\(entitlement) \(state)" + (expected.map { " until \($0)" } ?? "") + (autoRenew.map { " autoRenew=\($0)" } ?? "")
        return try await awaitLedger(user, what, sourceLocation: sourceLocation) { view in
            guard let current = view.entitlements.first(where: { $0.entitlement == entitlement }) else { return false }
            return current.state == state && (expected == nil || current.expiresAt == expected)
                && (autoRenew == nil || current.autoRenew == autoRenew)
        }
    }

    /// `tollctl audit` recomputes every balance from the transaction records: zero differences, exit 0.
    ///
    /// The audit reads a user's balance and records in separate commands, so a transaction applied for
    /// another test's user in between shows as a passing difference; only a difference that persists over
    /// `attempts` audits fails (a real one always does). With the system quiet, pass `attempts: 1`.
    func expectAuditClean(attempts: Int = 5, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        var audit = try await tollctl(["audit"])
        for _ in 1..<max(1, attempts) where audit.status != 0 {
            try await Task.sleep(for: .milliseconds(300))
            audit = try await tollctl(["audit"])
        }
        #expect(
            audit.status == 0 && audit.output.contains("differences=0"),
            "tollctl audit: \(audit.output)", sourceLocation: sourceLocation)
    }

    /// `tollctl user ID` output (coins, entitlements, counters, one line per transaction).
    func tollctlUser(_ user: String) async throws -> String {
        let result = try await tollctl(["user", user])
        #expect(result.status == 0, "tollctl user: \(result.output)")
        return result.output
    }

    static func describe(_ view: EntitlementsView) -> String {
        let list = view.entitlements.map { "\($0.entitlement)=\($0.state)@\($0.expiresAt ?? "-")/\($0.autoRenew)" }
        return "coins=\(view.coins) [\(list.joined(separator: ", "))]"
    }

    /// Milliseconds as the entitlements endpoint writes them (ISO 8601 UTC with milliseconds).
    static func iso8601(_ milliseconds: Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}
