import Redis

/// A job's status as kept in its hash (`tg:{J}:job:<id>`, J the partition its id names; `tg:{K}:job:<id>` too once its
/// event moved to partition K), written atomically with each stage's ack and read by ingest for `GET /v1/jobs/{id}`
/// and `?wait=` (``Keys/locateJob(_:on:)``).
///
/// Hash fields: `state`, `kind`, `user`, `reason` (a stable code), `message`, `attempt`, `next.at` (ms),
/// `updated.at` (ms), `result` (JSON of the final outcome, e.g. what was credited).
package struct JobStatus: Sendable, Hashable {
    package var jobID: String
    package var state: JobState
    package var kind: JobKind?
    package var userID: String?
    package var reason: String?
    package var message: String?
    package var attempt: Int?
    package var nextAttemptAtMilliseconds: Int64?
    package var updatedAtMilliseconds: Int64
    package var resultJSON: String?

    /// How long a job's status is kept after its last change.
    package static let retentionSeconds = 7 * 24 * 3600
    /// How long a job Apple did not vouch for (rejected by the verifier: a forged or junk submission) is kept,
    /// with its dedupe key: anonymous input leaves no lasting state unless it is genuinely from Apple, and what a
    /// user can leave behind is their submission rate times an hour.
    package static let rejectionRetentionSeconds = 3600

    package init(
        jobID: String, state: JobState, kind: JobKind? = nil, userID: String? = nil, reason: String? = nil,
        message: String? = nil, attempt: Int? = nil, nextAttemptAtMilliseconds: Int64? = nil,
        updatedAtMilliseconds: Int64, resultJSON: String? = nil
    ) {
        self.jobID = jobID
        self.state = state
        self.kind = kind
        self.userID = userID
        self.reason = reason
        self.message = message
        self.attempt = attempt
        self.nextAttemptAtMilliseconds = nextAttemptAtMilliseconds
        self.updatedAtMilliseconds = updatedAtMilliseconds
        self.resultJSON = resultJSON
    }

    /// The hash fields this status sets (absent optionals are not written, so an update keeps earlier values
    /// such as `user` and `kind`).
    package var fields: [(String, String)] {
        var fields: [(String, String)] = [
            ("state", state.rawValue),
            ("updated.at", String(updatedAtMilliseconds)),
        ]
        if let kind { fields.append(("kind", kind.rawValue)) }
        if let userID { fields.append(("user", userID)) }
        if let reason { fields.append(("reason", reason)) }
        if let message { fields.append(("message", message)) }
        if let attempt { fields.append(("attempt", String(attempt))) }
        if let nextAttemptAtMilliseconds { fields.append(("next.at", String(nextAttemptAtMilliseconds))) }
        if let resultJSON { fields.append(("result", resultJSON)) }
        return fields
    }

    /// The `HSET` (with retention, ``retentionSeconds`` unless given) that records this status, to pass to an ack
    /// function: in the job's home partition (the one its id names, ``Keys/job(_:)``), or in `partition` when given
    /// (the owner's partition K of a job whose event was moved there, whose home hash says ``movedToField`` = K).
    package func write(keys: Keys, partition: Int? = nil, expireSeconds: Int = JobStatus.retentionSeconds) -> PipelineWrite {
        .hset(
            key: partition.map { keys.job(jobID, partition: $0) } ?? keys.job(jobID), strings: fields,
            expireSeconds: expireSeconds)
    }

    /// The `PUBLISH` that wakes `?wait=` requests when the state is final.
    package func announcement(keys: Keys) -> PipelineWrite {
        .publish(channel: keys.jobResultsChannel, string: jobID)
    }

    /// Reads a status from `HGETALL` of its hash; nil when the hash is empty or has no valid state.
    package init?(jobID: String, hash: [String: String]) {
        guard let stateText = hash["state"], let state = JobState(rawValue: stateText) else { return nil }
        self.jobID = jobID
        self.state = state
        kind = hash["kind"].flatMap(JobKind.init(rawValue:))
        userID = hash["user"]
        reason = hash["reason"]
        message = hash["message"]
        attempt = hash["attempt"].flatMap { Int($0) }
        nextAttemptAtMilliseconds = hash["next.at"].flatMap { Int64($0) }
        updatedAtMilliseconds = hash["updated.at"].flatMap { Int64($0) } ?? 0
        resultJSON = hash["result"]
    }
}
