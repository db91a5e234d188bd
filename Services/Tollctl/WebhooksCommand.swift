import ArgumentParser

/// `tollctl webhooks list|dead|redrive|purge|test`: the notifier's endpoints (from the same `TOLLGATE_WEBHOOK_*` settings),
/// their backlog and dead letters (Services/Notifier/README.md).
struct WebhooksCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhooks", abstract: "Inspect and operate the notifier's webhook endpoints.",
        subcommands: [
            WebhooksListCommand.self, WebhooksDeadCommand.self, WebhooksRedriveCommand.self, WebhooksPurgeCommand.self,
            WebhooksTestCommand.self,
        ])
}
