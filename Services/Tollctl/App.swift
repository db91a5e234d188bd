import ArgumentParser

/// `tollctl`, the operators' command-line tool.
@main
struct Tollctl: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tollctl",
        abstract: "Operate Tollgate: verify Apple's signed data, inspect users, jobs and dead letters.",
        subcommands: [VerifyCommand.self, BenchVerifyCommand.self, StreamsCommand.self, DeadCommand.self,
                      UserCommand.self, JobCommand.self, AuditCommand.self, ReconcileCommand.self]
    )
}
