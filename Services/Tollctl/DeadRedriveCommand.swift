import ArgumentParser
import Foundation
import Pipeline
import Redis

/// `tollctl dead redrive ID|--all [--partition P]`: puts dead-lettered jobs (of every partition, or `--partition`'s;
/// an ID found in several partitions needs `--partition`) back on their stream with attempts reset,
/// deletes the dead entries and sets each job's status back to `queued`, each in one atomic Redis Function
/// call in that partition's slot (``DeadLetterFunctions``). Prints one line per entry:
/// `<dead id> -> <new id>  job=<id>  partition=<p>`.
struct DeadRedriveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "redrive", abstract: "Put dead-lettered entries back on their stream.")

    @OptionGroup var options: DeadOptions

    @Argument(help: "The dead-letter entry id (as `dead list` shows it).")
    var id: String?

    @Flag(help: "Redrive every dead-lettered entry.")
    var all = false

    func validate() throws {
        guard (id != nil) != all else { throw ValidationError("give either one entry ID or --all") }
    }

    func run() async throws {
        try await options.withRedis { redis, keys, partitions in
            try await DeadLetterFunctions.library.load(on: redis)
            var chosen: [(partition: Partition, entries: [StreamEntry])] = []
            for partition in partitions {
                let deadLetter = keys.stream(options.stream, partition: partition).deadLetter
                let entries: [StreamEntry]
                if let id {
                    entries = try await redis.xrange(deadLetter, start: id, end: id)
                } else {
                    entries = try await redis.xrange(deadLetter)
                }
                if !entries.isEmpty { chosen.append((partition, entries)) }
            }
            if let id {
                // Entry ids are per stream: the same id may name entries in two partitions.
                guard !chosen.isEmpty else {
                    throw ToolError(
                        "not_found", "no dead-letter entry \(id) in the \(options.stream) stream of \(Self.describe(partitions))")
                }
                guard chosen.count == 1 else {
                    throw ToolError(
                        "ambiguous",
                        "dead-letter entry \(id) exists in partitions \(chosen.map { $0.partition.description }.joined(separator: ", ")); "
                            + "pick one with --partition")
                }
            }
            var moved = 0
            for (partition, entries) in chosen {
                let stream = keys.stream(options.stream, partition: partition)
                for entry in entries {
                    let jobID = entry.string(Job.Field.id) ?? ""
                    // The job's hash in the stream's partition: where the entry's acknowledgements write its status.
                    let statusKey = keys.job(jobID.isEmpty ? "-" : jobID, partition: partition)
                    let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
                    if let newID = try await DeadLetterFunctions.redrive(
                        on: redis, keys: stream, statusKey: statusKey, backlogKey: keys.backlog(partition: partition),
                        deadID: entry.id, jobID: jobID, nowMilliseconds: now)
                    {
                        print("\(entry.id) -> \(newID)  job=\(jobID.isEmpty ? "-" : jobID)  partition=\(partition)")
                        moved += 1
                    }
                }
            }
            print("redriven=\(moved)")
        }
    }

    private static func describe(_ partitions: [Partition]) -> String {
        partitions.count == 1 ? "partition \(partitions[0])" : "any of the \(partitions.count) partitions"
    }
}
