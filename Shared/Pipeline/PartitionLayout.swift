import Redis

/// How Tollgate's data is split into partitions (`TOLLGATE_PARTITIONS`), each one Redis Cluster hash tag, so that
/// every atomic step touches one slot and the slots spread over the primaries.
///
/// - **One partition** (the default) is layout 1, today's names on one primary: `{p0}` for the pipeline,
///   `{u:<id>}` for a user's ledger, `{otx:<id>}` for a purchase chain's binding.
/// - **N partitions** (layout 2): partition k's tag is the first of `p<k>`, `p<k>.1`, `p<k>.2`… whose slot lies in
///   the k-th N-th of the slot space, so N partitions land evenly on the contiguous slot ranges
///   `redis-cli --cluster create` hands out (plain `{p0}`…`{p15}` put 4/5/7 of 16 on three primaries).
///
/// Which partition a user, a purchase chain, a job or a submission lives in is ``PartitionRouter``'s to say.
package struct PartitionLayout: Sendable, Hashable, CustomStringConvertible {
    /// The most partitions a deployment may have.
    package static let maximum = 1024
    /// One partition, today's names.
    package static let single = PartitionLayout(validCount: 1)

    /// How many partitions.
    package let count: Int
    /// Each partition's hash tag, with braces.
    package let tags: [String]

    /// The layout version recorded in Redis: 1 for a single partition (layout 1 names), 2 otherwise.
    package var version: Int { count == 1 ? 1 : 2 }
    /// Whether the names are layout 1's (`{u:<id>}`, `{otx:<id>}`).
    package var isSingle: Bool { count == 1 }

    /// - Throws: ``PipelineError/invalidPartitionCount(_:)`` outside `1...maximum`.
    package init(count: Int) throws(PipelineError) {
        guard (1...Self.maximum).contains(count) else { throw .invalidPartitionCount(count) }
        self.init(validCount: count)
    }

    private init(validCount count: Int) {
        self.count = count
        tags = (0..<count).map { Self.tag(partition: $0, of: count) }
    }

    /// Every partition, in order.
    package var partitions: [Partition] { (0..<count).map { Partition($0) } }

    /// The partition of index `index`; nil when this layout has no such partition (an index read from outside).
    package func partition(_ index: Int) -> Partition? { (0..<count).contains(index) ? Partition(index) : nil }

    /// The hash tag of `partition`, with braces; `{p<k>}` for one the layout does not have.
    package func tag(of partition: Partition) -> String {
        tags.indices.contains(partition.index) ? tags[partition.index] : "{p\(partition.index)}"
    }

    /// The slot range partition `k` aims for.
    package static func slotRange(partition k: Int, of count: Int) -> Range<Int> {
        (k * ClusterKeySlot.count / count)..<((k + 1) * ClusterKeySlot.count / count)
    }

    package var description: String { "\(count) partition\(count == 1 ? "" : "s") (layout \(version))" }

    /// `{p<k>}`, or the first `{p<k>.<i>}` whose slot is in partition k's range (one partition: `{p0}`).
    private static func tag(partition k: Int, of count: Int) -> String {
        let range = slotRange(partition: k, of: count)
        var suffix = 0
        while true {
            let name = suffix == 0 ? "p\(k)" : "p\(k).\(suffix)"
            if count == 1 || range.contains(ClusterKeySlot.slot(name)) { return "{\(name)}" }
            suffix += 1
        }
    }
}
