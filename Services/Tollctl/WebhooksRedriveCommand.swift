import ArgumentParser
import Foundation
import Webhooks

/// `tollctl webhooks redrive [--endpoint NAME] [--id ID] [--count N]`: sends dead letters again, signed now; each
/// one answered 2xx is deleted. Prints `delivered=… failed=… unreadable=…`; exit status 1 when any failed.
struct WebhooksRedriveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "redrive", abstract: "Send an endpoint's dead letters again.")

    @OptionGroup var options: WebhooksOptions

    @Option(help: "Only this dead letter (its id in the dead-letter stream).")
    var id: String?

    @Option(help: "At most this many, oldest first.")
    var count: Int = 100

    func run() async throws {
        let settings = try WebhooksOptions.settings()
        let endpoint = try options.chosen(in: settings)
        let sender = WebhookSender(transport: WebhookSender.makeTransport(connectionsPerHost: 1), timeout: settings.timeout)
        var failed = false
        try await options.withRedis { redis, keys, partitions in
            let outcome = try await WebhookDeadLetters(redis: redis, keys: keys).redrive(
                endpoint, partitions: partitions, sender: sender, now: { Int64(Date().timeIntervalSince1970 * 1000) },
                limit: count, id: id)
            print("delivered=\(outcome.delivered)  failed=\(outcome.failed)  unreadable=\(outcome.unreadable)")
            failed = outcome.failed > 0
        }
        if failed { throw ExitCode(1) }
    }
}
