import ArgumentParser
import Foundation
import Ledger
import Logging
import Pipeline
import Redis
import ServiceKit

/// `tollctl layout`: the deployment's partitions (`show`), and moving a single-primary deployment to N partitions
/// (`repartition`) before it is imported into a Redis Cluster. Reads `TOLLGATE_REDIS_URL` and `TOLLGATE_KEY_PREFIX`.
struct LayoutCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "layout", abstract: "Show the partitions, or move a single-primary deployment to N partitions.",
        subcommands: [Show.self, RepartitionCommand.self])

    /// One connection to the single primary being moved, without the layout check the services make (this command is
    /// how a mismatch is fixed).
    static func connect() async throws -> (RedisConnection, SharedConfiguration) {
        let shared = try SharedConfiguration(environment: ProcessInfo.processInfo.environment)
        let logger = Logger(label: "tollctl", factory: { _ in SwiftLogNoOpLogHandler() })
        return (try await shared.connectOne(clientName: "tollctl", logger: logger, commandTimeout: .seconds(30)), shared)
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "The partitions recorded in Redis and configured here, with each tag's slot.")

        func run() async throws {
            let shared = try SharedConfiguration(environment: ProcessInfo.processInfo.environment)
            let logger = Logger(label: "tollctl", factory: { _ in SwiftLogNoOpLogHandler() })
            let redis = try await shared.connectTool(clientName: "tollctl", logger: logger, commandTimeout: .seconds(10))
            defer { redis.close() }
            let record = try await redis.hgetall(shared.keys.layoutRecord)
            print(
                "recorded=\(record["partitions"] ?? "none") configured=\(shared.keys.layout.count)"
                    + (record["migrating"].map { " migrating=\($0)" } ?? ""))
            for partition in shared.keys.partitions {
                let tag = shared.keys.tag(partition: partition)
                print("  partition=\(partition)  tag=\(tag)  slot=\(ClusterKeySlot.slot(tag))")
            }
        }
    }

    struct RepartitionCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "repartition",
            abstract: "Move the data of a single primary from one partition to N (services stopped, work drained).")

        @Option(help: "The partitions to move to, 2-1024 (16 suits up to about 4 primaries; pick 4x the primaries you expect).")
        var partitions: Int

        func validate() throws {
            guard (2...PartitionLayout.maximum).contains(partitions) else {
                throw ValidationError("--partitions must be 2-\(PartitionLayout.maximum)")
            }
        }

        func run() async throws {
            let (redis, shared) = try await LayoutCommand.connect()
            defer { redis.close() }
            let report = try await Repartition(redis: redis, prefix: shared.keys.prefix, partitions: partitions).run()
            if report.alreadyDone {
                print("already laid out in \(partitions) partitions; nothing moved")
            } else {
                print(
                    "partitions=\(partitions) userKeys=\(report.userKeys) chainKeys=\(report.chainKeys) "
                        + "sweepEntries=\(report.sweepEntries)")
                print("start the services with TOLLGATE_PARTITIONS=\(partitions)")
            }
        }
    }
}
