import ArgumentParser

/// `tollctl apple …`: checks against Apple's App Store Server API.
struct AppleCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apple", abstract: "Check the App Store Server API and notifications.",
        subcommands: [
            TestNotificationCommand.self, ExtendCommand.self, ExtendAllCommand.self, ExtendStatusCommand.self,
            AppTransactionCommand.self, SetAccountTokenCommand.self,
        ])
}
