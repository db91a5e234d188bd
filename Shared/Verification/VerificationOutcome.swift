import AppStore
import Core
import Pipeline

/// What the verifier decided about one job, as a value (never thrown).
enum VerificationOutcome: Sendable {
    /// Genuine and meant for this app: hand the event to the fulfiller.
    case verified(PurchaseEvent)
    /// Genuine, and nothing for the fulfiller to do (a `TEST` notification, an answered
    /// `CONSUMPTION_REQUEST`): the job is finished here with state `fulfilled` and this result. A notification's
    /// UUID is remembered with it (``Keys/verifiedNotification(uuid:)``). `project`: the project of the app Apple signed
    /// a notification for, recorded in the job's status so that its keys read it (docs/PROJECTS.md); nil leaves the
    /// status's project as ingest wrote it.
    case recorded(result: String, notificationUUID: String? = nil, project: ProjectID? = nil)
    /// A genuine V2 notification another job already verified (a replay, however it was wrapped): finished here,
    /// with no Apple call, no event and no park.
    case duplicate(firstJobID: String)
    /// Never acceptable: the job is rejected with the failure's stable code.
    case rejected(VerificationFailure)
    /// Not known yet: retry later, not before `retryAfter` when Apple said so.
    case retryable(VerificationFailure, retryAfter: Duration?)

    /// The `outcome` dimension of the jobs metric.
    var metricName: String {
        switch self {
        case .verified: "verified"
        case .recorded: "recorded"
        case .duplicate: "duplicate"
        case .rejected: "rejected"
        case .retryable: "retryable"
        }
    }

    /// Converts a verification result whose verified value needs further work.
    static func from<Value>(
        _ result: VerificationResult<Value>, retryAfter: Duration? = nil,
        _ verified: (Value) async -> VerificationOutcome
    ) async -> VerificationOutcome {
        switch result {
        case .verified(let value): return await verified(value)
        case .rejected(let failure): return .rejected(failure)
        case .retryable(let failure): return .retryable(failure, retryAfter: retryAfter)
        }
    }
}
