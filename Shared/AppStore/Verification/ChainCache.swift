import Crypto
import Foundation

/// Certificate chains already proven to lead from an App Store leaf to a trusted root, keyed by the JWS
/// header that carried them (which holds the whole `x5c`).
///
/// A hit skips header decoding, certificate parsing and the P-384 chain signatures: what is left per
/// JWS is one P-256 verification and the validity-window check at the validation time, which the
/// entry keeps because it depends on each JWS's `signedDate`. Bounded; the least recently used entry
/// goes first. Entries hold nothing secret.
public final class ChainCache: @unchecked Sendable {
    // @unchecked Sendable: all mutable state (`entries`, `tick`, counters) is only touched while `lock`
    // is held; the stored entries themselves are immutable Sendable values.

    /// What a proven chain leaves behind.
    public struct Entry: Sendable {
        /// The leaf's key, which signs the JWS.
        public let leafKey: P256.Signing.PublicKey
        /// Validity windows of the leaf, the intermediate and the root, in ms since 1970.
        public let windows: [ValidityWindow]
        /// When the chain was proven (ms since 1970); online mode re-proves after a while.
        public let provenAt: Int64
    }

    /// One certificate's validity period, in milliseconds since 1970, both ends inclusive.
    public struct ValidityWindow: Sendable, Hashable {
        public let role: String
        public let notBefore: Int64
        public let notAfter: Int64
    }

    /// Hit, miss and eviction counts since creation.
    public struct Statistics: Sendable, Hashable {
        public var hits = 0
        public var misses = 0
        public var evictions = 0
        public var count = 0
    }

    private struct Slot {
        var header: [UInt8]
        var entry: Entry
        var lastUse: UInt64
    }

    /// How many chains are kept at most; 0 disables caching.
    public let capacity: Int
    private let lock = NSLock()
    private var slots: [Int: Slot] = [:]
    private var tick: UInt64 = 0
    private var stats = Statistics()

    public init(capacity: Int = 64) {
        self.capacity = max(0, capacity)
    }

    /// The entry for a header segment, if its chain was proven before.
    func lookup(header: ArraySlice<UInt8>) -> Entry? {
        guard capacity > 0 else { return nil }
        let key = Self.key(header)
        lock.lock()
        defer { lock.unlock() }
        if var slot = slots[key], Self.equal(slot.header, header) {
            tick &+= 1
            slot.lastUse = tick
            slots[key] = slot
            stats.hits += 1
            return slot.entry
        }
        stats.misses += 1
        return nil
    }

    /// Remembers a proven chain, evicting the least recently used entry when full.
    func insert(header: ArraySlice<UInt8>, entry: Entry) {
        guard capacity > 0 else { return }
        let key = Self.key(header)
        lock.lock()
        defer { lock.unlock() }
        if slots[key] == nil, slots.count >= capacity,
           let oldest = slots.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            slots.removeValue(forKey: oldest)
            stats.evictions += 1
        }
        tick &+= 1
        slots[key] = Slot(header: Array(header), entry: entry, lastUse: tick)
        stats.count = slots.count
    }

    /// Current counters.
    public var statistics: Statistics {
        lock.lock()
        defer { lock.unlock() }
        var copy = stats
        copy.count = slots.count
        return copy
    }

    /// Hashes the header's length, first 512 and last 64 bytes: the leaf certificate's serial number
    /// and key sit near the start. Equality is always confirmed on the whole header.
    private static func key(_ header: ArraySlice<UInt8>) -> Int {
        var hasher = Hasher()
        hasher.combine(header.count)
        header.withUnsafeBytes { bytes in
            hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: bytes.prefix(512)))
            hasher.combine(bytes: UnsafeRawBufferPointer(rebasing: bytes.suffix(64)))
        }
        return hasher.finalize()
    }

    private static func equal(_ stored: [UInt8], _ header: ArraySlice<UInt8>) -> Bool {
        guard stored.count == header.count else { return false }
        return stored.withUnsafeBytes { left in
            header.withUnsafeBytes { right in
                guard let l = left.baseAddress, let r = right.baseAddress else { return left.count == right.count }
                return memcmp(l, r, left.count) == 0
            }
        }
    }
}
