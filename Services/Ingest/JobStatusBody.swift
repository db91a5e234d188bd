import Core
import Foundation
import Hummingbird
import Pipeline

/// The JSON of a job's status: `{attempt?, jobId, message?, nextAttemptAt?, reason?, result?, status}` (keys in
/// this order); `nextAttemptAt` is ISO 8601, `result` the fulfiller's JSON embedded as it is stored (as a string
/// if it is not valid JSON).
///
/// Written with ``Core/JSONWriter``: every `?wait=` answer is one of these, and going through `JSONSerialization`
/// (bridging, sorting keys, re-serializing the parsed result) cost more of ingest's CPU on the purchase path than
/// anything else but the TLS-free HTTP work itself (`scripts/bench-cpu --perf`). The stored result is checked once
/// (``Core/JSONReader/isValid(_:)``) and its bytes embedded, never parsed into a value and written again.
enum JobStatusBody {
    static func response(_ httpStatus: HTTPResponse.Status, _ status: JobStatus) -> Response {
        Response(
            status: httpStatus, headers: [.contentType: "application/json"], body: .init(byteBuffer: render(status)))
    }

    /// `{"jobId": …, "status": "queued"}`: a job whose status hash is not there (yet).
    static func queuedResponse(jobID: String) -> Response {
        Response(
            status: .accepted, headers: [.contentType: "application/json"], body: .init(byteBuffer: renderQueued(jobID: jobID)))
    }

    static func renderQueued(jobID: String) -> ByteBuffer {
        var writer = JSONWriter(capacity: 96)
        writer.beginObject()
        writer.member("jobId", jobID)
        writer.member("status", "queued")
        writer.endObject()
        return ByteBuffer(bytes: writer.bytes)
    }

    static func render(_ status: JobStatus) -> ByteBuffer {
        var writer = JSONWriter(capacity: 192 + (status.resultJSON?.utf8.count ?? 0))
        writer.beginObject()
        writer.member("attempt", status.attempt)
        writer.member("jobId", status.jobID)
        writer.member("message", status.message)
        if let next = status.nextAttemptAtMilliseconds {
            writer.member("nextAttemptAt", UTCTime.iso8601(milliseconds: next))
        }
        writer.member("reason", status.reason)
        if let result = status.resultJSON {
            writer.key("result")
            if JSONReader.isValid(Array(result.utf8)) {
                writer.rawJSON(result.utf8)
            } else {
                writer.string(result)
            }
        }
        writer.member("status", status.state.rawValue)
        writer.endObject()
        return ByteBuffer(bytes: writer.bytes)
    }
}
