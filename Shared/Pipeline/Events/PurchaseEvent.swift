import Core
import Foundation

/// The canonical purchase event: what the verifier hands to the fulfiller for one verified job, written as
/// JSON (field ``streamField``, `event`) on the verified stream (`tg:{p0}:verified`), together with the
/// fields `job.id` and `event.version`. This is the contract the fulfiller is written against.
///
/// Everything in it was verified with Apple's rules (JWS chain and claims, or Apple's `verifyReceipt`
/// answer, or a V1 notification's shared secret); nothing comes from the client unchecked except
/// ``userId`` (authenticated by ingest) and ``orderNo`` (the order the client says it pays).
///
/// JSON fields (dates are integers, milliseconds since 1970, like Apple's V2 payloads; absent optionals
/// are omitted, never `null`):
/// - `version` — `1`. A change that a version-1 reader would misread gets a new number; new optional
///   fields may be added within a version, so readers ignore fields they do not know.
/// - `jobId` — the job's id (the key of its status hash, `tg:{p0}:job:<jobId>`).
/// - `kind` — the job kind (``JobKind`` raw value): `receipt`, `transaction`, `notification.v2`,
///   `notification.v1`.
/// - `source` — `client` (an app user submitted it), `apple` (a server notification) or `reconciler` (the
///   verifier recovered it from Apple's Notification History or subscription statuses).
/// - `userId` — the authenticated user who submitted it (client jobs only).
/// - `orderNo` — the order the submission pays (optional, client jobs only).
/// - `environment` — Apple's environment of the data: `Production` or `Sandbox` (also `Xcode`,
///   `LocalTesting`); the ledger keeps environments apart.
/// - `verifiedAt` — when the verifier accepted it.
/// - `transactions` — the purchases, see ``PurchaseEventTransaction``: all of a receipt's transactions
///   (deduplicated, by purchase date), the one StoreKit 2 transaction, or a notification's transaction
///   (empty for notifications without one, e.g. `EXTERNAL_PURCHASE_TOKEN`, summaries or `RESCIND_CONSENT`).
/// - `renewals` — subscription renewal states, see ``PurchaseEventRenewal``, one per
///   `originalTransactionId`, when Apple sent them (`pending_renewal_info`, `signedRenewalInfo`).
/// - `notification` — for notification jobs, see ``PurchaseEventNotification``: type, subtype, UUID,
///   signed date.
/// - `side` — `sandbox` when the change belongs to the user's sandbox side (``LedgerSide``): the verifier of a
///   production deployment that accepts sandbox data sets it on every non-production event; absent otherwise.
/// - `bundleId` — the app Apple signed the data for (the StoreKit 2 transaction's, the notification's, the receipt's):
///   one of the deployment's apps (`TOLLGATE_APPS`), never what a client said. Absent in events written before it
///   was recorded.
/// - `project` — the project (docs/PROJECTS.md) of the app Apple signed the data for (``bundleId``), whose ledger
///   the fulfiller applies the event to; absent for the default project.
/// - `apple` — Apple's own signed JWS the change came from (a notification's `signedPayload`, a StoreKit 2
///   transaction), only with `TOLLGATE_EVENTS_INCLUDE_APPLE=true`: the outbound events carry it so that a receiver can
///   check Apple's signature itself (docs/EVENTS.md).
package struct PurchaseEvent: Codable, Sendable, Hashable {
    /// The version this code writes.
    package static let currentVersion = 1
    /// The verified-stream field holding the event's JSON.
    package static let streamField = "event"
    /// The verified-stream field holding the job id (so that the entry can be traced without decoding).
    package static let jobIDField = "job.id"
    /// The verified-stream field holding the event version.
    package static let versionField = "event.version"

    package var version: Int
    package var jobId: String
    package var kind: JobKind
    package var source: Job.Source
    package var userId: String?
    package var orderNo: String?
    package var environment: String
    package var verifiedAt: Int64
    package var transactions: [PurchaseEventTransaction]
    package var renewals: [PurchaseEventRenewal]
    package var notification: PurchaseEventNotification?
    package var apple: String?
    /// ``LedgerSide/label`` of the side the change is applied on; nil: the primary side.
    package var side: String?
    package var bundleId: String?
    /// ``Core/ProjectID/label`` of the project whose ledger the event applies to; nil: the default project.
    package var project: String?

    package init(
        version: Int = PurchaseEvent.currentVersion, jobId: String, kind: JobKind, source: Job.Source,
        userId: String? = nil, orderNo: String? = nil, environment: String, verifiedAt: Int64,
        transactions: [PurchaseEventTransaction], renewals: [PurchaseEventRenewal] = [],
        notification: PurchaseEventNotification? = nil
    ) {
        self.version = version
        self.jobId = jobId
        self.kind = kind
        self.source = source
        self.userId = userId
        self.orderNo = orderNo
        self.environment = environment
        self.verifiedAt = verifiedAt
        self.transactions = transactions
        self.renewals = renewals
        self.notification = notification
    }

    /// The event's identity fields taken from a job (id, kind, source, user, order); the verifier adds
    /// what it verified.
    package init(
        job: Job, environment: String, verifiedAt: Int64, transactions: [PurchaseEventTransaction],
        renewals: [PurchaseEventRenewal] = [], notification: PurchaseEventNotification? = nil
    ) {
        self.init(
            jobId: job.id, kind: job.kind, source: job.source, userId: job.userID, orderNo: job.orderNo,
            environment: environment, verifiedAt: verifiedAt, transactions: transactions,
            renewals: renewals, notification: notification)
    }

    /// Places the event on the ledger side its environment belongs to in a deployment whose own environment is
    /// production (`deploymentIsProduction`) or sandbox (``LedgerSide/of(environment:deploymentIsProduction:)``).
    package mutating func placeSide(deploymentIsProduction: Bool) {
        side = LedgerSide.of(environment: environment, deploymentIsProduction: deploymentIsProduction).label
    }

    /// The JSON encoding (sorted keys, so equal events encode equally).
    package func encoded() throws -> [UInt8] {
        var writer = JSONWriter()
        write(to: &writer)
        return writer.bytes
    }

    package static func decode(_ bytes: [UInt8]) throws -> PurchaseEvent {
        try PurchaseEvent(json: JSONFields(JSONReader.parse(bytes)))
    }

    /// The verified-stream fields of this event: `job.id`, `event.version`, `event` (JSON).
    package func streamFields() throws -> [(String, [UInt8])] {
        [
            (Self.jobIDField, Array(jobId.utf8)),
            (Self.versionField, Array(String(version).utf8)),
            (Self.streamField, try encoded()),
        ]
    }
}
