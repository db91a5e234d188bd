import ArgumentParser
import Foundation
import Pipeline
import Redis

/// `tollctl job ID`: a job's status (state, kind, user, reason, attempts, result), as ingest reports it.
/// Exits 1 with `error: job_not_found` when no status exists (never created, or past its 7-day retention).
struct JobCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "job", abstract: "Show a job's status.")

    @Argument(help: "The job id.")
    var jobID: String

    @Option(help: "The partition of the job.")
    var partition: Int = 0

    func run() async throws {
        try await UserLedgerConnection.with { redis, keys in
            let hash = try await UserLedgerConnection.hash(redis, keys.job(jobID, partition: partition))
            guard let status = JobStatus(jobID: jobID, hash: hash) else {
                throw ToolError("job_not_found", "no status for job \(jobID)")
            }
            print("job \(status.jobID)")
            for (name, value) in status.fields where name != "result" {
                print("  \(name)=\(value)")
            }
            if let result = status.resultJSON { print("  result=\(result)") }
        }
    }
}
