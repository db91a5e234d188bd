package import Core

/// Key naming for everything Tollgate keeps in Redis.
///
/// Every key starts with the prefix (`TOLLGATE_KEY_PREFIX`, default `tg`) and carries a hash tag, so that
/// all keys one atomic step touches live in one Redis Cluster slot: job streams are tagged by partition
/// (`tg:{p0}:jobs`), and a stream's derived keys share its tag (`tg:{p0}:jobs:retry`, `tg:{p0}:jobs:dead`).
package struct Keys: Sendable, Hashable {
    /// The stream names every deployment has.
    package static let knownStreams = ["jobs", "verified", "events"]

    /// The prefix, without the trailing colon.
    package let prefix: String
    /// The partitions (`TOLLGATE_PARTITIONS`), which decide every tag.
    package let layout: PartitionLayout
    /// The ledger side the user-ledger keys (account, records, entitlements, event log) name (``LedgerSide``);
    /// orders, tokens, bindings, grants and everything of the pipeline are one per user and ignore it.
    package private(set) var side = LedgerSide.primary
    /// The project whose ledger the per-project keys name (docs/PROJECTS.md): the default project's are today's names,
    /// another project's carry its id after the prefix (``projectPrefix``). The pipeline's keys (streams, job hashes,
    /// backlog, Apple's rate buckets, the reconciler's state) are the deployment's and ignore it.
    package private(set) var project = ProjectID.default

    package init(prefix: String = "tg", layout: PartitionLayout = .single) {
        self.prefix = prefix
        self.layout = layout
    }

    /// The hash tag of a partition, e.g. `{p0}` (one partition) or `{p1.42}` (sixteen).
    package func tag(partition: Partition) -> String { layout.tag(of: partition) }

    /// Every partition, in order.
    package var partitions: [Partition] { layout.partitions }

    /// A key in the control slot `{p0}`, which the whole deployment shares whatever its partitions: the layout
    /// record, the reconciler's lease, cursors and status.
    package func controlKey(_ parts: String...) -> String {
        ([prefix, "{p0}"] + parts).joined(separator: ":")
    }

    /// Where the partitions are recorded (`tg:{p0}:layout`, hash: `partitions`, `version`).
    package var layoutRecord: String { controlKey("layout") }

    /// The hash tag every key of one user carries: `{u:<id>}` with one partition, else `{<partition tag>}:u:<id>`
    /// (the tag of ``PartitionRouter/partition(ofUser:)``), so `tg:{p3}:u:42:account`.
    package func userTag(_ userID: String) -> String {
        layout.isSingle ? "{u:\(userID)}" : "\(tag(partition: partition(ofUser: userID))):u:\(userID)"
    }

    /// These keys with the user-ledger keys of `side`.
    package func on(_ side: LedgerSide) -> Keys {
        var keys = self
        keys.side = side
        return keys
    }

    /// These keys with the per-project keys of `project`.
    package func inProject(_ project: ProjectID) -> Keys {
        var keys = self
        keys.project = project
        return keys
    }

    /// The head of every per-project key: the prefix for the default project (`tg`), the prefix and the project's id
    /// for another (`tg:shop2`). The id is outside the hash tag, so a key keeps the slot it has in the default project.
    package var projectPrefix: String { project.isDefault ? prefix : "\(prefix):\(project.rawValue)" }

    /// The head of a user-ledger key of ``side`` in ``project``: `tg:{u:<id>}` on the primary side, `tg:{u:<id>}:sbx`
    /// on the sandbox side (the same slot), `tg:shop2:{u:<id>}` in the project `shop2`.
    package func sidedUser(_ userID: String) -> String { "\(projectPrefix):\(userTag(userID))\(side.keyInfix)" }

    /// A key of ``project`` in a partition's slot: `tg:{p0}:<parts>` in the default project, `tg:shop2:{p0}:<parts>` in
    /// another (the same slot).
    package func projectPartitionKey(_ partition: Partition, _ parts: String...) -> String {
        ([projectPrefix, tag(partition: partition)] + parts).joined(separator: ":")
    }

    /// Who answers "which partition" for this layout.
    package var router: PartitionRouter { PartitionRouter(layout: layout) }

    /// The partition of a user's ledger (``PartitionRouter/partition(ofUser:)``).
    package func partition(ofUser userID: String) -> Partition { router.partition(ofUser: userID) }

    /// The partition of a purchase chain (``PartitionRouter/partition(ofOriginalTransaction:)``).
    package func partition(ofOriginalTransaction otid: String) -> Partition {
        router.partition(ofOriginalTransaction: otid)
    }

    /// The tag of a purchase chain's keys: `{otx:<id>}` with one partition, else `{<partition tag>}:otx:<id>`.
    package func chainTag(_ originalTransactionId: String) -> String {
        layout.isSingle
            ? "{otx:\(originalTransactionId)}"
            : "\(tag(partition: partition(ofOriginalTransaction: originalTransactionId))):otx:\(originalTransactionId)"
    }

    /// A key in a partition's slot: `tg:{p0}:<parts joined by ':'>`.
    package func partitionKey(_ partition: Partition, _ parts: String...) -> String {
        ([prefix, tag(partition: partition)] + parts).joined(separator: ":")
    }

    /// The keys of the stream `name` in `partition`.
    package func stream(_ name: String, partition: Partition = .first) -> StreamKeys {
        StreamKeys(stream: partitionKey(partition, name))
    }

    /// The job stream of a partition (`tg:{p0}:jobs`), consumed by the verifier.
    package func jobs(partition: Partition = .first) -> StreamKeys { stream("jobs", partition: partition) }

    /// The verified-events stream of a partition (`tg:{p0}:verified`), consumed by the fulfiller.
    package func verified(partition: Partition = .first) -> StreamKeys { stream("verified", partition: partition) }

    /// What each source's unfinished jobs hold in a partition, `tg:{p0}:backlog` (hash: `<source>.jobs`,
    /// `<source>.bytes`): raised by ingest's enqueue, lowered when the verifier finishes a job (completed or
    /// dead-lettered, atomically with its acknowledgement), checked against each source's budget.
    package func backlog(partition: Partition = .first) -> String { partitionKey(partition, "backlog") }

    /// A user's unfinished client jobs (per project), `tg:{p0}:inflight:<userId>` (zset: jobId scored by enqueue time, ms), in
    /// the jobs stream's slot: ingest's enqueue caps it.
    package func inFlight(user userID: String, partition: Partition = .first) -> String {
        projectPartitionKey(partition, "inflight", userID)
    }

    /// A service key's unfinished operator calls (per project), `tg:{p0}:inflight.key:<name>` (zset, as a user's
    /// ``inFlight(user:partition:)``), in the slot of the partition the key's jobs start in.
    package func inFlight(serviceKey name: String, partition: Partition = .first) -> String {
        projectPartitionKey(partition, "inflight.key", name)
    }

    /// A service key's fleet-wide token bucket of the jobs it makes (per project), `tg:{key:<name>}:jobs.rate`.
    package func jobBucket(serviceKey name: String) -> String { "\(projectPrefix):{key:\(name)}:jobs.rate" }

    /// A user's fleet-wide submission token bucket (per project) (``TokenBucket``), `tg:{u:<userId>}:submit.rate`, in the user's
    /// slot; it expires once full again.
    package func submissionBucket(user userID: String) -> String { "\(projectPrefix):\(userTag(userID)):submit.rate" }

    /// The entitlement-change events stream of a partition (`tg:{p0}:events`), for the app's backend.
    package func events(partition: Partition = .first) -> StreamKeys { stream("events", partition: partition) }
}
