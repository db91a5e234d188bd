import Redis

/// The one place that answers "which partition" (docs/CLUSTER.md §3 "Who decides the partition"): of a user's
/// ledger, of a purchase chain, of a job by its id, of a notification's job and of a submission's job. Each answer
/// is CRC16/XMODEM (the cluster's own hash) of an id modulo N, which any language — the app's backend too — can
/// reproduce, or, for a job id, the partition its first four hex digits name (``Keys/newJobID(partition:)``).
/// With one partition every answer is partition 0.
package struct PartitionRouter: Sendable, Hashable {
    /// The partitions the answers are among.
    package let layout: PartitionLayout

    package init(layout: PartitionLayout) {
        self.layout = layout
    }

    /// `Pu(user)`: where the user's whole ledger lives, with that partition's events stream and sweep index.
    package func partition(ofUser userID: String) -> Partition { hashing(userID) }

    /// `Po(otid)`: where a purchase chain's binding and parked events live, and its notifications' jobs start.
    package func partition(ofOriginalTransaction originalTransactionId: String) -> Partition {
        hashing(originalTransactionId)
    }

    /// The partition an arbitrary id hashes to (the same function as `Pu` and `Po`): the placement of what has no
    /// user or purchase chain (a notification without an `originalTransactionId`, a job by its dedupe hash).
    package func partition(hashing id: String) -> Partition { hashing(id) }

    /// The home partition a job id names: partition 0 with one partition, else its first 4 hex digits. Nil when
    /// `jobID` is not 32 lowercase hex digits or names a partition this layout does not have (a forged id).
    package func partition(ofJob jobID: String) -> Partition? {
        guard Keys.isJobIDShaped(jobID) else { return nil }
        if layout.isSingle { return .first }
        return Int(jobID.prefix(4), radix: 16).flatMap { layout.partition($0) }
    }

    /// Where a notification's job starts: `Po` of its `originalTransactionId`, so that the chain's binding, parked
    /// events and job share a slot; without one, the partition its `notificationUUID` (lower-cased) hashes to, so
    /// that every copy of one notification (Apple's retries, the reconciler's recovery) meets the same markers. Nil
    /// when it has neither: the caller places it by its dedupe hash. Both ids are read unverified: only a locality
    /// hint.
    package func partition(ofNotification originalTransactionId: String?, uuid: String?) -> Partition? {
        if let originalTransactionId, !originalTransactionId.isEmpty {
            return partition(ofOriginalTransaction: originalTransactionId)
        }
        if let uuid, !uuid.isEmpty { return partition(hashing: uuid.lowercased()) }
        return nil
    }

    /// Where ingest starts a submission's job: `Pu` of a client's authenticated `submitter` (the owner, so the job
    /// never moves and the in-flight cap shares its slot); for Apple's notification the partition of its
    /// `notification` ids (``partition(ofNotification:uuid:)``); anything else, or a notification with neither id,
    /// where its `dedupeHash` hashes to.
    /// - Parameters:
    ///   - submitter: the client's user; nil for a submission of Apple's or an operator's.
    ///   - notification: the ids a notification names, read unverified; nil for what is no notification.
    package func partition(
        ofSubmissionBy submitter: String?, notification: (originalTransactionId: String?, uuid: String?)?,
        dedupeHash: String
    ) -> Partition {
        guard !layout.isSingle else { return .first }
        if let submitter { return partition(ofUser: submitter) }
        let hinted = notification.flatMap { partition(ofNotification: $0.originalTransactionId, uuid: $0.uuid) }
        return hinted ?? partition(hashing: dedupeHash)
    }

    private func hashing(_ id: String) -> Partition {
        layout.isSingle ? .first : Partition(Int(ClusterKeySlot.crc16(id.utf8)) % layout.count)
    }
}
