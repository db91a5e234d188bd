import Redis

/// A job's status as kept in its hash (`tg:{J}:job:<id>`, J the partition its id names; `tg:{K}:job:<id>` too once its
/// event moved to partition K), written atomically with each stage's ack and read by ingest for `GET /v1/jobs/{id}`
/// and `?wait=` (``Keys/locateJob(_:on:)``).
///
/// Hash fields (``Field``): `state`, `kind`, `user`, `source`, `reason` (a stable code), `message`, `attempt`,
/// `next.at` (ms), `updated.at` (ms), `verified.at` (ms), `result` (JSON of the final outcome, e.g. what was
/// credited), `moved.to` (a partition), `project` (the job's project other than `default`, docs/PROJECTS.md: a client's
/// or an operator call's, written by ingest; a notification's or a reconciliation job's, written where the verifier or
/// the reconciler places it by the app Apple signed; only that project's callers read it). Every writer, in Swift or Lua, goes through `Lua/jobs.lua`'s `write_status`,
/// which takes these names only (``write(keys:partition:expireSeconds:)`` hands it a ``PipelineWrite/status``).
package struct JobStatus: Sendable, Hashable {
    /// The status hash's field names, declared once here for Swift (and in `Lua/jobs.lua`'s `STATUS_FIELDS` for Lua:
    /// `JobStatusWritersTests` writes through every Lua writer and reads through this type).
    package enum Field: String, CaseIterable, Sendable {
        case state, kind, user, source, reason, message, attempt
        case nextAt = "next.at"
        case updatedAt = "updated.at"
        case verifiedAt = "verified.at"
        case result
        case movedTo = "moved.to"
        case project
    }

    package var jobID: String
    package var state: JobState
    package var kind: JobKind?
    package var userID: String?
    /// Who submitted the job (`Job.Source`), when a writer records it.
    package var source: String?
    package var reason: String?
    package var message: String?
    package var attempt: Int?
    package var nextAttemptAtMilliseconds: Int64?
    package var updatedAtMilliseconds: Int64
    /// When the verifier handed the job's event to the fulfiller.
    package var verifiedAtMilliseconds: Int64?
    package var resultJSON: String?
    /// The job's project when it is not `default` (``Core/ProjectID/label``): the submitting user's or key's, or the
    /// one of the app Apple signed an Apple job's data for.
    package var project: String?

    /// How long a job's status is kept after its last change.
    package static let retentionSeconds = 7 * 24 * 3600
    /// How long a job Apple did not vouch for (rejected by the verifier: a forged or junk submission) is kept,
    /// with its dedupe key: anonymous input leaves no lasting state unless it is genuinely from Apple, and what a
    /// user can leave behind is their submission rate times an hour.
    package static let rejectionRetentionSeconds = 3600

    package init(
        jobID: String, state: JobState, kind: JobKind? = nil, userID: String? = nil, source: String? = nil,
        reason: String? = nil, message: String? = nil, attempt: Int? = nil, nextAttemptAtMilliseconds: Int64? = nil,
        updatedAtMilliseconds: Int64, verifiedAtMilliseconds: Int64? = nil, resultJSON: String? = nil
    ) {
        self.jobID = jobID
        self.state = state
        self.kind = kind
        self.userID = userID
        self.source = source
        self.reason = reason
        self.message = message
        self.attempt = attempt
        self.nextAttemptAtMilliseconds = nextAttemptAtMilliseconds
        self.updatedAtMilliseconds = updatedAtMilliseconds
        self.verifiedAtMilliseconds = verifiedAtMilliseconds
        self.resultJSON = resultJSON
    }

    /// The hash fields this status sets (absent optionals are not written, so an update keeps earlier values
    /// such as `user` and `kind`).
    package var fields: [(String, String)] {
        var fields: [(Field, String)] = [(.state, state.rawValue), (.updatedAt, String(updatedAtMilliseconds))]
        if let kind { fields.append((.kind, kind.rawValue)) }
        if let userID { fields.append((.user, userID)) }
        if let source { fields.append((.source, source)) }
        if let reason { fields.append((.reason, reason)) }
        if let message { fields.append((.message, message)) }
        if let attempt { fields.append((.attempt, String(attempt))) }
        if let nextAttemptAtMilliseconds { fields.append((.nextAt, String(nextAttemptAtMilliseconds))) }
        if let verifiedAtMilliseconds { fields.append((.verifiedAt, String(verifiedAtMilliseconds))) }
        if let resultJSON { fields.append((.result, resultJSON)) }
        if let project { fields.append((.project, project)) }
        return fields.map { ($0.0.rawValue, $0.1) }
    }

    /// The write that records this status (retention ``retentionSeconds`` unless given), to pass to an ack function:
    /// in the job's home partition (the one its id names, ``Keys/job(_:)``), or in `partition` when given (the
    /// owner's partition K of a job whose event was moved there, whose home hash says ``Field/movedTo`` = K). A final
    /// state is announced on the job-results channel by the writer itself, with the whole hash.
    package func write(keys: Keys, partition: Partition? = nil, expireSeconds: Int = JobStatus.retentionSeconds) -> PipelineWrite {
        .status(
            key: partition.map { keys.job(jobID, partition: $0) } ?? keys.job(jobID), jobID: jobID, fields: fields, clear: [],
            expireSeconds: expireSeconds, channel: keys.jobResultsChannel)
    }

    /// Reads a status from `HGETALL` of its hash; nil when the hash is empty or has no valid state.
    package init?(jobID: String, hash: [String: String]) {
        func value(_ field: Field) -> String? { hash[field.rawValue] }
        guard let stateText = value(.state), let state = JobState(rawValue: stateText) else { return nil }
        self.jobID = jobID
        self.state = state
        kind = value(.kind).flatMap(JobKind.init(rawValue:))
        userID = value(.user)
        source = value(.source)
        reason = value(.reason)
        message = value(.message)
        attempt = value(.attempt).flatMap { Int($0) }
        nextAttemptAtMilliseconds = value(.nextAt).flatMap { Int64($0) }
        updatedAtMilliseconds = value(.updatedAt).flatMap { Int64($0) } ?? 0
        verifiedAtMilliseconds = value(.verifiedAt).flatMap { Int64($0) }
        resultJSON = value(.result)
        project = value(.project)
    }
}
