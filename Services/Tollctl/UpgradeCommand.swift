import ArgumentParser
import Ledger
import Pipeline

/// `tollctl upgrade`: runs every step that brings the data in Redis from the version it was written with to this
/// build's, then records the version the services check at start (``Ledger/DataUpgrade``, docs/UPGRADING.md). Run it
/// with the services stopped, after a backup. Prints `data version F -> T`, one line per step, then `upgraded`;
/// `data version N is current; nothing to do` when there is nothing to do (a second run).
struct UpgradeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade", abstract: "Bring the data in Redis to this release's version (services stopped, Redis backed up).")

    func run() async throws {
        let projects = try ProjectOption.configured()
        // The layout check is the upgrade's own (it tells a layout-1 deployment from before the layout record).
        try await UserLedgerConnection.with(commandTimeout: .seconds(30)) { redis, keys in
            let report = try await DataUpgrade(redis: redis, keys: keys, projects: projects).run()
            if report.empty {
                print("nothing stored yet; recorded data version \(report.to)")
            } else if report.alreadyCurrent {
                print("data version \(report.to) is current; nothing to do")
            } else {
                print("data version \(report.from) -> \(report.to)")
                for line in report.steps { print("  \(line)") }
                print("upgraded; start this release's services")
            }
        }
    }
}
