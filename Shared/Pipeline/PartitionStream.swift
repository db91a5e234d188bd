/// One partition's stream of a stage (its retry and dead-letter keys derive from it), as a consumer reads it.
package struct PartitionStream: Sendable, Hashable, CustomStringConvertible {
    /// The partition (``Keys/partitions``).
    package let partition: Partition
    /// The stream and its derived keys, all in the partition's slot.
    package let keys: StreamKeys

    package init(partition: Partition, keys: StreamKeys) {
        self.partition = partition
        self.keys = keys
    }

    package var description: String { keys.stream }
}

extension Keys {
    /// The stream `name` of each of `partitions` (every partition of the layout by default), e.g. all the job
    /// streams a verifier consumes.
    package func partitionStreams(_ name: String, partitions: [Partition]? = nil) -> [PartitionStream] {
        (partitions ?? self.partitions).map { PartitionStream(partition: $0, keys: stream(name, partition: $0)) }
    }
}
