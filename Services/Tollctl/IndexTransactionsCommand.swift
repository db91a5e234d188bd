import ArgumentParser
import Ledger
import Pipeline

/// `tollctl index-transactions [--dry-run]`: writes the owner index of every transaction record that has none
/// (``Ledger/TransactionOwnerIndex``), so that `GET /v1/transactions/{id}` and `tollctl lookup --transaction` find
/// records written before the index existed. Prints `users=N transactions=N written=N` (`missing=N` in a dry run).
struct IndexTransactionsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index-transactions", abstract: "Index older transaction records for look-ups by transaction ID.")

    @OptionGroup var project: ProjectOption

    @Flag(help: "Only count the records without an index entry.")
    var dryRun = false

    func run() async throws {
        let project = try self.project.resolve()
        try await UserLedgerConnection.with { redis, allKeys in
            let keys = allKeys.inProject(project)
            let report = try await TransactionOwnerIndex.backfill(on: redis, keys: keys, dryRun: dryRun)
            print("users=\(report.users) transactions=\(report.transactions) \(dryRun ? "missing" : "written")=\(report.written)")
        }
    }
}
