import ArgumentParser
import Foundation
import Pipeline
import Redis

/// `tollctl dead redrive ID|--all`: puts dead-lettered jobs back on their stream with attempts reset,
/// deletes the dead entries and sets each job's status back to `queued`, each in one atomic Redis Function
/// call (``DeadLetterFunctions``). Prints one line per entry: `<dead id> -> <new id>`.
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
        try await options.withRedis { redis, allKeys, keys in
            try await DeadLetterFunctions.library.load(on: redis)
            var entries: [StreamEntry]
            if let id {
                entries = try await redis.xrange(keys.deadLetter, start: id, end: id)
                if entries.isEmpty { throw ToolError("not_found", "no dead-letter entry \(id) in \(keys.deadLetter)") }
            } else {
                entries = try await redis.xrange(keys.deadLetter)
            }
            var moved = 0
            for entry in entries {
                let jobID = entry.string(Job.Field.id) ?? ""
                let statusKey = allKeys.job(jobID.isEmpty ? "-" : jobID, partition: options.partition)
                let now = Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
                if let newID = try await DeadLetterFunctions.redrive(
                    on: redis, keys: keys, statusKey: statusKey, backlogKey: allKeys.backlog(partition: options.partition),
                    deadID: entry.id, jobID: jobID, nowMilliseconds: now)
                {
                    print("\(entry.id) -> \(newID)  job=\(jobID.isEmpty ? "-" : jobID)")
                    moved += 1
                }
            }
            print("redriven=\(moved)")
        }
    }
}
