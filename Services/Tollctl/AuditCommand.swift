import ArgumentParser
import Foundation
import Ledger
import Pipeline

/// `tollctl audit`: recomputes every user's coin balance from the transaction records and compares it with
/// the stored balance. Prints `users=N transactions=N differences=N`, then one line per difference; exits 1
/// when there is any.
struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "Recompute balances from the transaction records and report differences.")

    func run() async throws {
        var differences = 0
        try await UserLedgerConnection.with { redis, keys in
            let report = try await LedgerAudit(redis: redis, keys: keys).run()
            print("users=\(report.users) transactions=\(report.transactions) differences=\(report.differences.count)")
            for difference in report.differences {
                print(
                    "  user=\(difference.user)  stored=\(difference.stored)  recomputed=\(difference.recomputed)  "
                        + "difference=\(difference.stored - difference.recomputed)")
            }
            differences = report.differences.count
        }
        if differences > 0 { throw ExitCode(1) }
    }
}
