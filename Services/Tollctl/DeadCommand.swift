import ArgumentParser

/// `tollctl dead`: the dead-letter stream of the jobs (`tg:{p0}:jobs:dead`): list and redrive.
struct DeadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dead",
        abstract: "List dead-lettered jobs and put them back on the jobs stream.",
        subcommands: [DeadListCommand.self, DeadRedriveCommand.self]
    )
}
