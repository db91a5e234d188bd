import Pipeline

/// The reconciler's Redis keys, all in the jobs stream's slot (`{p0}`) so that one function call can enqueue
/// a recovered job and mark its notification seen atomically:
///
/// | key | type | what |
/// |---|---|---|
/// | `tg:{p0}:reconcile:lease` | string | the leader's random token, expiring (`PX`) unless renewed |
/// | `tg:{p0}:reconcile:cursor:<Environment>` | hash | `checkpoint` (ms, all before it enqueued), open `window.*`, `page.token` |
/// | `tg:{p0}:reconcile:status` | hash | the last successful pass: `pass.at` (ms), `pass.found`, `pass.enqueued`, `pass.corrected` |
/// | `tg:{p0}:reconcile:seen:<notificationUUID>` | string | the job that carries a recovered notification (expires) |
/// | `tg:{p0}:notification:<notificationUUID>` | hash | `job`: the job that verified a V2 notification first (expires) |
extension Keys {
    /// The first job that verified a V2 notification (written with that job's acknowledgement): a later job
    /// carrying the same `notificationUUID` is a replay, finished without an Apple call, an event or a park.
    func verifiedNotification(uuid: String) -> String { partitionKey(0, "notification", uuid.lowercased()) }

    /// The leader lease.
    var reconcileLease: String { partitionKey(0, "reconcile", "lease") }

    /// Where the notification pass of `environment` (`Production`, `Sandbox`) stands.
    func reconcileCursor(environment: String) -> String { partitionKey(0, "reconcile", "cursor", environment) }

    /// The last successful pass.
    var reconcileStatus: String { partitionKey(0, "reconcile", "status") }

    /// Marks a notification the reconciler already enqueued.
    func reconcileSeen(notificationUUID: String) -> String { partitionKey(0, "reconcile", "seen", notificationUUID.lowercased()) }
}
