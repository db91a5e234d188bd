import ArgumentParser
import Foundation
import Ledger
import Pipeline

/// `tollctl audit`: recomputes every user's coin balance from the transaction records (plus what labelled grants
/// added, ``Ledger/LedgerAudit``) and compares it with the stored balance. Prints `users=N transactions=N
/// differences=N`, then one line per difference, then the users with grants apart (`granted users=N`, one line each:
/// never differences against Apple's records); exits 1 when there is any difference.
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
            print("granted users=\(report.granted.count)")
            for granted in report.granted {
                print("  user=\(granted.user)  grants=\(granted.grants)  grantedCoins=\(granted.coins)")
            }
            differences = report.differences.count
        }
        if differences > 0 { throw ExitCode(1) }
    }
}
