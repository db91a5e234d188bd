import ArgumentParser
import Core

/// `tollctl`, the operators' command-line tool.
@main
struct Tollctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tollctl",
        abstract:
            "Operate Tollgate: verify Apple's signed data, inspect users, jobs and dead letters, ask Apple (orders, test notifications, extensions); sandbox helpers.",
        version: TollgateVersion.line(tool: "tollctl"),
        subcommands: [
            VerifyCommand.self, BenchVerifyCommand.self, StreamsCommand.self, DeadCommand.self,
            UserCommand.self, GrantsCommand.self, IndexTransactionsCommand.self, JobCommand.self, AuditCommand.self, ExportCommand.self,
            UpgradeCommand.self,
            ReconcileCommand.self,
            LookupCommand.self,
            AppleCommand.self, DevCommand.self, LayoutCommand.self, WebhooksCommand.self, SandboxCommand.self,
            TestersCommand.self,
        ]
    )

    /// Parses and runs a subcommand. ArgumentParser reports what is its own (usage, `--help`, a chosen exit
    /// status, a validation message); any other error ends the run as every Tollgate executable ends one
    /// (``Core/Fatal``): `tollctl: error: <code>: <message>`, exit status 1.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
        } catch {
            // `--help` arrives as an error of ArgumentParser's own (internal) types, so tell them by module.
            if String(reflecting: type(of: error)).hasPrefix("ArgumentParser.") { exit(withError: error) }
            Fatal.exit(tool: "tollctl", error: error)
        }
    }
}
