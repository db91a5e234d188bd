import ArgumentParser

/// `tollctl dev`: helpers for a local or sandbox deployment, refused against production.
struct DevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract: "Development helpers for a sandbox deployment (refused unless TOLLGATE_ENVIRONMENT=sandbox).",
        subcommands: [DevTokenCommand.self]
    )
}
