import Pipeline

/// The reconciler's Redis keys. The leader's own state is deployment-wide, in the control slot `{p0}`
/// (``Keys/controlKey(_:)``, the same names as with one partition); the markers of one notification live in the
/// partition J its job starts in (``Keys/partition(ofNotification:uuid:)``: Po of its `originalTransactionId`, else
/// its UUID's), so that each function call that writes or reads them touches one slot:
///
/// | key | type | what | written by |
/// |---|---|---|---|
/// | `tg:{p0}:reconcile:lease` | string | the leader's random token, expiring (`PX`) unless renewed | acquire |
/// | `tg:{p0}:reconcile:cursor:<Environment>` | hash | `checkpoint` (ms, all before it enqueued), open `window.*`, `page.token` | write |
/// | `tg:{p0}:reconcile:cursor:<Environment>:<bundleId>` | hash | the same, for each app past the default (`TOLLGATE_APPS`) | write |
/// | `tg:{p0}:reconcile:status` | hash | the last successful pass: `pass.at` (ms), `pass.found`, `pass.enqueued`, `pass.corrected` | write |
/// | `tg:{J}:reconcile:seen:<notificationUUID>` | string | the job that carries a recovered notification (expires) | enqueue, with the job in J |
/// | `tg:{J}:notification:<notificationUUID>` | hash | `job`: the job that verified a V2 notification first (expires) | the verifier's ack of that job, in J |
extension Keys {
    /// The first job that verified a V2 notification (written with that job's acknowledgement, in the partition
    /// `partition` the job's id names, which is the notification's J): a later job carrying the same
    /// `notificationUUID` is a replay, finished without an Apple call, an event or a park. Every copy of one
    /// notification starts in the same J, so a replay finds the mark.
    func verifiedNotification(uuid: String, partition: Partition) -> String {
        partitionKey(partition, "notification", uuid.lowercased())
    }

    /// The leader lease.
    var reconcileLease: String { controlKey("reconcile", "lease") }

    /// Where the notification pass of `environment` (`Production`, `Sandbox`) stands.
    func reconcileCursor(environment: String) -> String { controlKey("reconcile", "cursor", environment) }

    /// The notification cursor of one app (`TOLLGATE_APPS` past its first; nil: the default app's, the name above).
    func reconcileCursor(environment: String, app: String?) -> String {
        guard let app else { return reconcileCursor(environment: environment) }
        return controlKey("reconcile", "cursor", environment, app)
    }

    /// The last successful pass.
    var reconcileStatus: String { controlKey("reconcile", "status") }

    /// Marks a notification the reconciler already enqueued, in the partition its job is enqueued in.
    func reconcileSeen(notificationUUID: String, partition: Partition) -> String {
        partitionKey(partition, "reconcile", "seen", notificationUUID.lowercased())
    }
}
