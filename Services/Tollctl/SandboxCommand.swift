import ArgumentParser
import Foundation
import Ledger
import Pipeline

/// `tollctl sandbox clear USERID [--by NAME]`: clears the user's sandbox side (``Pipeline/LedgerSide``: a production
/// deployment's App Review and TestFlight purchases) — its coins, entitlements, records and renewal state — with a
/// `sandbox.cleared` event in that side's sequence (``Ledger/SandboxSide``). The user's production side is untouched.
struct SandboxCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sandbox", abstract: "The sandbox side of users' ledgers (App Review, TestFlight).",
        subcommands: [SandboxClearCommand.self])
}

struct SandboxClearCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "clear",
        abstract: "Clear a user's sandbox side: its coins, entitlements and records. The production side is untouched.")

    @OptionGroup var target: UserChangeArguments

    func run() async throws {
        let project = try target.project.resolve()
        try await UserLedgerConnection.with { redis, allKeys in
            let keys = allKeys.inProject(project)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            switch try await SandboxSide.clear(user: target.userID, by: target.by, keys: keys, now: now, on: redis) {
            case .empty:
                print("user \(target.userID): the sandbox side holds nothing")
            case .cleared(let coins, let transactions, let seq, let eventId):
                print(
                    "user \(target.userID): sandbox side cleared  coins=\(coins) transactions=\(transactions) event=\(eventId) seq=\(seq)")
            }
        }
    }
}
