import ArgumentParser
import Foundation
import Pipeline
import Redis

/// `tollctl job ID`: a job's status (state, kind, user, reason, attempts, result), as ingest reports it: read in the
/// partition the id names, following the job's `moved.to` chain (``Keys/locateJob(_:on:)``); `--partition` reads
/// that partition's hash of the id instead, as it is. Exits 1 with `error: job_not_found` when no status exists
/// (never created, past its 7-day retention, or an id naming no partition of this layout).
struct JobCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "job", abstract: "Show a job's status.")

    @Argument(help: "The job id.")
    var jobID: String

    @Option(help: "Read the job's hash in this partition, as it is (default: the partition its id names, following moved.to).")
    var partition: Int?

    func validate() throws {
        if let partition, !(0..<PartitionLayout.maximum).contains(partition) {
            throw ValidationError("--partition must be 0-\(PartitionLayout.maximum - 1)")
        }
    }

    func run() async throws {
        try await UserLedgerConnection.with { redis, keys in
            let location: JobLocation?
            if let partition {
                let key = keys.job(jobID, partition: Partition(partition))
                location = JobLocation(key: key, hash: try await UserLedgerConnection.hash(redis, key), movedFrom: nil)
            } else {
                location = try await keys.locateJob(jobID, on: redis)
            }
            guard let location, let status = location.status(jobID: jobID) else {
                throw ToolError("job_not_found", "no status for job \(jobID)")
            }
            print("job \(status.jobID)")
            print("  key=\(location.key)")
            if let from = location.movedFrom { print("  moved.from=\(from)") }
            if let moved = location.hash[JobStatus.movedToField] { print("  \(JobStatus.movedToField)=\(moved)") }
            for (name, value) in status.fields where name != "result" {
                print("  \(name)=\(value)")
            }
            if let result = status.resultJSON { print("  result=\(result)") }
        }
    }
}
