import ArgumentParser
import Webhooks

/// `tollctl webhooks purge --endpoint NAME [--partition P]`: deletes every dead letter of the endpoint (each
/// partition's `tg:{pN}:webhook:<name>:dead`, or only P's), configured or not (an endpoint taken out of the
/// configuration). Prints `purged=N`. The events themselves stay readable in each user's event log
/// (`GET /v1/users/{userId}/events`).
struct WebhooksPurgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "purge", abstract: "Delete an endpoint's dead letters (configured or removed).")

    @Option(help: "The endpoint's name (required: a purge names what it deletes).")
    var endpoint: String

    @Option(help: "Only this partition (default: every partition of TOLLGATE_PARTITIONS).")
    var partition: Int?

    func run() async throws {
        // The name is checked as an endpoint's (it is part of the keys deleted), not looked up: a removed endpoint's
        // dead letters are purged the same way.
        if let problem = WebhookEndpoint.nameProblem(endpoint) { throw ToolError("invalid_endpoint", problem) }
        try await UserLedgerConnection.with(commandTimeout: .seconds(15)) { redis, keys in
            let partitions = try UserLedgerConnection.partitions(partition, of: keys)
            let purged = try await WebhookDeadLetters(redis: redis, keys: keys).purge(endpoint, partitions: partitions)
            print("purged=\(purged)")
        }
    }
}
