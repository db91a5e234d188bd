package import Core
import Foundation
package import Redis

/// The envelope of one job on the jobs stream (`tg:{p0}:jobs`), written by ingest and read by the verifier.
///
/// Stream fields (values UTF-8 unless noted):
/// - `job.id` — the job's id (also the key of its status hash)
/// - `job.kind` — a ``JobKind`` raw value
/// - `job.payload` — the submitted bytes exactly as received (receipt base64 with `+` restored, JWS, or the
///   notification body), binary safe
/// - `job.source` — `client` (an authenticated app user), `apple` (a server notification) or `reconciler`
///   (recovered by the verifier's reconciler from Apple's history)
/// - `job.user` — the authenticated user id (client submissions only)
/// - `job.order` — the order number the submission pays (optional)
/// - `job.received` — when ingest accepted it, milliseconds since 1970
/// - `job.bytes` — the payload's size as counted in its source's backlog (`tg:{p0}:backlog`); the verifier
///   takes it off again when it finishes the job (absent: not counted, e.g. reconciler jobs)
/// - `job.project` — the project of the user who submitted it (client jobs of a project other than `default` only,
///   docs/PROJECTS.md): the verifier refuses (`wrong_project`) a purchase of an app of another project
/// - `job.dedupe` — the dedupe key that maps the submission to this job (ingest's jobs), so that a rejected
///   anonymous job's key can be made short-lived with it
/// - `job.budget` — the backlog budget the job is counted in when it is not its source's (`service`: a service
///   key's operator call, apart from the app users' `client` budget); absent: its source's
package struct Job: Sendable, Hashable {
    package enum Source: String, Sendable, Hashable, Codable {
        case client
        case apple
        /// Recovered from Apple's Notification History or subscription statuses by the verifier's reconciler.
        case reconciler
    }

    package var id: String
    package var kind: JobKind
    package var payload: [UInt8]
    package var source: Source
    package var userID: String?
    package var orderNo: String?
    package var receivedAtMilliseconds: Int64
    /// The bytes this job counts in its source's backlog, when counted.
    package var countedBytes: Int?
    /// The dedupe key pointing at this job, when there is one.
    package var dedupeKey: String?
    /// The submitting user's project (client jobs); the default project when absent.
    package var project = ProjectID.default
    /// The backlog budget the job is counted in, when not its source's (``Budget``).
    package var budget: String?

    /// Backlog budgets other than a source's.
    package enum Budget {
        /// Service keys' operator calls (`GET /v1/lookup?orderId=`, `POST /v1/admin/apple/…`): apart from the app
        /// users' submissions, so that neither starves the other.
        package static let service = "service"
    }

    package init(
        id: String, kind: JobKind, payload: [UInt8], source: Source,
        userID: String? = nil, orderNo: String? = nil, receivedAtMilliseconds: Int64,
        countedBytes: Int? = nil, dedupeKey: String? = nil
    ) {
        self.id = id
        self.kind = kind
        self.payload = payload
        self.source = source
        self.userID = userID
        self.orderNo = orderNo
        self.receivedAtMilliseconds = receivedAtMilliseconds
        self.countedBytes = countedBytes
        self.dedupeKey = dedupeKey
    }

    /// A new random job id (a UUID without dashes, lowercase) for one partition; ``Keys/newJobID(partition:)``
    /// names the partition in the id.
    package static func newID() -> String {
        UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }

    /// The stream fields of this job, in a fixed order.
    package var fields: [(String, [UInt8])] {
        var fields: [(String, [UInt8])] = [
            (Field.id, Array(id.utf8)),
            (Field.kind, Array(kind.rawValue.utf8)),
            (Field.payload, payload),
            (Field.source, Array(source.rawValue.utf8)),
            (Field.received, Array(String(receivedAtMilliseconds).utf8)),
        ]
        if let userID { fields.append((Field.user, Array(userID.utf8))) }
        if let orderNo { fields.append((Field.order, Array(orderNo.utf8))) }
        if let countedBytes { fields.append((Field.bytes, Array(String(countedBytes).utf8))) }
        if let dedupeKey { fields.append((Field.dedupe, Array(dedupeKey.utf8))) }
        if let project = project.label { fields.append((Field.project, Array(project.utf8))) }
        if let budget { fields.append((Field.budget, Array(budget.utf8))) }
        return fields
    }

    /// Reads a job back from a stream entry; throws ``PipelineError/malformedEntry(id:message:)`` when a
    /// required field is missing or invalid.
    package init(entry: StreamEntry) throws(PipelineError) {
        func require(_ name: String) throws(PipelineError) -> String {
            guard let value = entry.string(name), !value.isEmpty else {
                throw .malformedEntry(id: entry.id, message: "missing field \(name)")
            }
            return value
        }
        id = try require(Field.id)
        let kindText = try require(Field.kind)
        guard let kind = JobKind(rawValue: kindText) else {
            throw .malformedEntry(id: entry.id, message: "unknown job kind '\(kindText)'")
        }
        self.kind = kind
        guard let payload = entry.fields[Field.payload], !payload.isEmpty else {
            throw .malformedEntry(id: entry.id, message: "missing field \(Field.payload)")
        }
        self.payload = payload
        let sourceText = try require(Field.source)
        guard let source = Source(rawValue: sourceText) else {
            throw .malformedEntry(id: entry.id, message: "unknown job source '\(sourceText)'")
        }
        self.source = source
        guard let received = Int64(try require(Field.received)) else {
            throw .malformedEntry(id: entry.id, message: "\(Field.received) is not a number")
        }
        receivedAtMilliseconds = received
        userID = entry.string(Field.user)
        orderNo = entry.string(Field.order)
        countedBytes = entry.string(Field.bytes).flatMap { Int($0) }
        dedupeKey = entry.string(Field.dedupe)
        guard let project = ProjectID(field: entry.string(Field.project)) else {
            throw .malformedEntry(id: entry.id, message: "\(Field.project) is not a project id")
        }
        self.project = project
        budget = entry.string(Field.budget)
    }

    /// The writes that take a finished job off its source's backlog counters (``Keys/backlog(partition:)`` of the
    /// partition its id names, where ingest counted it: the jobs stream's slot): none when it was never counted.
    /// Applied with the job's final acknowledgement (completion or dead letter), never with a retry, so each
    /// counted job is taken off exactly once. A job counted in another budget than its source's (`job.budget`) is taken
    /// off that one.
    /// `partition`: the jobs stream's partition the entry was read from, when known (the same as its id's).
    package static func backlogRelease(of entry: StreamEntry, keys: Keys, partition: Partition? = nil) -> [PipelineWrite] {
        guard let bytes = entry.string(Field.bytes).flatMap({ Int64($0) }),
            let source = entry.string(Field.budget) ?? entry.string(Field.source)
        else {
            return []
        }
        let backlog = keys.backlog(partition: partition ?? entry.string(Field.id).flatMap { keys.partition(ofJob: $0) } ?? .first)
        return [
            .hincrby(key: backlog, field: source + ".jobs", delta: -1),
            .hincrby(key: backlog, field: source + ".bytes", delta: -bytes),
        ]
    }

    /// The stream field names.
    package enum Field {
        package static let id = "job.id"
        package static let kind = "job.kind"
        package static let payload = "job.payload"
        package static let source = "job.source"
        package static let user = "job.user"
        package static let order = "job.order"
        package static let received = "job.received"
        package static let bytes = "job.bytes"
        package static let dedupe = "job.dedupe"
        package static let project = "job.project"
        package static let budget = "job.budget"
    }
}
