import Core
import Foundation

/// Job ids and where a job starts.
///
/// A job id is 32 lowercase hex digits. With one partition it is a random (version 4) UUID, as it always was.
/// With N partitions its first 4 hex digits are the partition J the job was enqueued in (N ≤ 1024 <
/// 0x10000) and the other 28 are random, so that anyone holding the id finds its status hash
/// `tg:{J}:job:<id>` (``job(_:)``) without an index. An id whose digits name a partition ≥ N is no job of this
/// deployment.
extension Keys {
    /// A new random job id in partition `partition` (see the extension's comment); with one partition a plain
    /// random UUID's 32 hex digits.
    package func newJobID(partition: Partition) -> String {
        var bytes = Self.randomUUIDBytes()
        if !layout.isSingle {
            bytes[0] = UInt8(truncatingIfNeeded: partition.index >> 8)
            bytes[1] = UInt8(truncatingIfNeeded: partition.index)
        }
        return Hex.lowercase(bytes)
    }

    /// The 16 bytes of a random (version 4, RFC 9562) UUID from the system's generator (`getrandom`). Foundation's
    /// `UUID()` on Linux opened, read and closed `/dev/urandom` for each one: three system calls per job.
    static func randomUUIDBytes() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes = withUnsafeBytes(of: (generator.next() as UInt64, generator.next() as UInt64)) { Array($0) }
        bytes[6] = (bytes[6] & 0x0f) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3f) | 0x80  // the RFC's variant
        return bytes
    }

    /// Whether `jobID` has the form of a job id: 32 lowercase hex digits.
    package static func isJobIDShaped(_ jobID: String) -> Bool {
        jobID.utf8.count == 32
            && jobID.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }

    /// The home partition a job id names (``PartitionRouter/partition(ofJob:)``): 0 with one partition, else its
    /// first 4 hex digits. Nil when `jobID` is not 32 lowercase hex digits or names a partition this layout does not
    /// have.
    package func partition(ofJob jobID: String) -> Partition? { router.partition(ofJob: jobID) }

    /// Where a notification's job starts (docs/CLUSTER.md §3 "Who decides the partition"): the partition of its
    /// purchase chain, Po(`originalTransactionId`), so that the chain's binding, parked events and job share a slot;
    /// without one, the partition its `notificationUUID` hashes to, so that every copy of one notification (Apple's
    /// retries, the reconciler's recovery) lands in the same partition with its markers. Nil when it has neither: the
    /// caller places it by its dedupe hash. Both ids are read unverified: only a locality hint
    /// (``PartitionRouter/partition(ofNotification:uuid:)``).
    package func partition(ofNotification originalTransactionId: String?, uuid: String?) -> Partition? {
        router.partition(ofNotification: originalTransactionId, uuid: uuid)
    }
}
