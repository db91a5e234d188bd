/// How long and how much of each user's own event log the ledger keeps (docs/EVENTS.md, "Pulling"): the stream
/// `tg:{u:<id>}:events` (``Keys/userEvents(user:)``), one entry per event with the id `<seq>-0`, the newest
/// ``cap`` entries, the key kept ``retentionSeconds`` after the user's last event. A consumer that tracks `seq` can
/// prove it missed nothing within these bounds.
///
/// Settings (fulfiller): `TOLLGATE_USER_EVENTS_RETENTION_DAYS` (90), `TOLLGATE_USER_EVENTS_CAP` (1000).
package struct UserEventLog: Sendable, Hashable {
    package var retentionSeconds: Int
    package var cap: Int

    package init(retentionSeconds: Int = 90 * 86_400, cap: Int = 1000) {
        self.retentionSeconds = retentionSeconds
        self.cap = cap
    }
}
