import Foundation
import Pipeline

/// The JSON of a job's status: `{jobId, status, reason?, message?, attempt?, nextAttemptAt?, result?}`;
/// `nextAttemptAt` is ISO 8601, `result` the fulfiller's JSON (embedded as JSON; as a string if unreadable).
enum JobStatusBody {
    static func object(_ status: JobStatus) -> [String: Any] {
        var object: [String: Any] = ["jobId": status.jobID, "status": status.state.rawValue]
        if let reason = status.reason { object["reason"] = reason }
        if let message = status.message { object["message"] = message }
        if let attempt = status.attempt { object["attempt"] = attempt }
        if let next = status.nextAttemptAtMilliseconds {
            let formatter = ISO8601DateFormatter()
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            object["nextAttemptAt"] = formatter.string(from: Date(timeIntervalSince1970: Double(next) / 1000))
        }
        if let result = status.resultJSON {
            object["result"] = (try? JSONSerialization.jsonObject(with: Data(result.utf8), options: [.fragmentsAllowed])) ?? result
        }
        return object
    }
}
