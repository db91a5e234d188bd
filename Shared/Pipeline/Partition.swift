/// One partition of the layout (docs/CLUSTER.md §2): its index `k` in `0..<N`. Its hash tag, `{p<k>}` or the first
/// range-aligned `{p<k>.<i>}`, depends on N and is the layout's to name (``PartitionLayout/tag(of:)``,
/// ``Keys/tag(partition:)``); which partition an id lives in is ``PartitionRouter``'s to say.
///
/// A literal is a partition (`keys.jobs(partition: 0)`), so tests and defaults read as before; an index read from
/// outside (a job hash's `moved.to`, a command line) goes through ``PartitionLayout/partition(_:)``, which refuses
/// one the layout does not have.
package struct Partition: Hashable, Sendable, Comparable, CustomStringConvertible, ExpressibleByIntegerLiteral {
    /// The index, `0..<N`.
    package let index: Int

    package init(_ index: Int) { self.index = index }

    package init(integerLiteral index: Int) { self.index = index }

    /// Partition 0, the only one with one partition.
    package static let first = Partition(0)

    package static func < (lhs: Partition, rhs: Partition) -> Bool { lhs.index < rhs.index }

    /// The index in decimal, as logs, Lua arguments and the `moved.to` field have always written it.
    package var description: String { String(index) }
}
