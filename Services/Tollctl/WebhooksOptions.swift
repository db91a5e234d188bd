import ArgumentParser
import Core
import Foundation
import Pipeline
import Redis
import Webhooks

/// Options shared by the `tollctl webhooks` subcommands that act on one endpoint.
struct WebhooksOptions: ParsableArguments {
    @Option(help: "The endpoint's name (default: the only one configured; `default` with TOLLGATE_WEBHOOK_URL).")
    var endpoint: String?

    @Option(help: "Only this partition (default: every partition of TOLLGATE_PARTITIONS).")
    var partition: Int?

    /// The endpoints configured in the environment (``Webhooks/WebhookSettings``); none is an error.
    static func settings() throws -> WebhookSettings {
        let settings = try WebhookSettings(reader: EnvironmentReader(ProcessInfo.processInfo.environment))
        guard !settings.endpoints.isEmpty else {
            throw ToolError("no_endpoints", "no webhook endpoint is configured (TOLLGATE_WEBHOOK_URL or TOLLGATE_WEBHOOKS)")
        }
        return settings
    }

    /// The endpoint chosen by `--endpoint`.
    func chosen(in settings: WebhookSettings) throws -> WebhookEndpoint {
        if let endpoint {
            guard let found = settings.endpoint(endpoint) else {
                throw ToolError("unknown_endpoint", "no endpoint is named \(endpoint)")
            }
            return found
        }
        guard settings.endpoints.count == 1 else {
            throw ToolError("endpoint_required", "several endpoints are configured: name one with --endpoint")
        }
        return settings.endpoints[0]
    }

    /// Runs `body` with a Redis connection, the keys and the partitions chosen.
    func withRedis(_ body: (any RedisCommandExecutor, Keys, [Partition]) async throws -> Void) async throws {
        try await UserLedgerConnection.with(commandTimeout: .seconds(15)) { redis, keys in
            try await body(redis, keys, try UserLedgerConnection.partitions(partition, of: keys))
        }
    }
}
