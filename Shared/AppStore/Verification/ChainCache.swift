import Crypto
import Foundation

/// Certificate chains already proven to lead from an App Store leaf to a trusted root, keyed by the SHA-256 of
/// the `x5c` certificates' DER (``Key``): however the header around them varies, the same chain is the same entry.
///
/// A chain is inserted only after a JWS it carried had a valid leaf signature, so a forger can neither insert
/// an entry nor evict one with genuine certificates and a bad signature. A hit skips certificate parsing and the
/// chain signatures: what is left per JWS is one P-256 verification and the validity-window check at the
/// validation time, which the entry keeps because it depends on each JWS's `signedDate`. Bounded; the least
/// recently used entry goes first. Entries hold nothing secret.
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

    /// The SHA-256 of a chain's certificates (each DER, length-prefixed, leaf first).
    public struct Key: Sendable, Hashable {
        let digest: [UInt8]

        public init(certificates: [[UInt8]]) {
            var hasher = SHA256()
            for der in certificates {
                withUnsafeBytes(of: UInt32(der.count).bigEndian) { hasher.update(bufferPointer: $0) }
                hasher.update(data: der)
            }
            digest = Array(hasher.finalize())
        }
    }

    private struct Slot {
        var entry: Entry
        var lastUse: UInt64
    }

    /// How many chains are kept at most; 0 disables caching.
    public let capacity: Int
    private let lock = NSLock()
    private var slots: [Key: Slot] = [:]
    private var tick: UInt64 = 0
    private var stats = Statistics()

    public init(capacity: Int = 64) {
        self.capacity = max(0, capacity)
    }

    /// The entry for a chain, if it was proven before.
    func lookup(_ key: Key) -> Entry? {
        guard capacity > 0 else { return nil }
        lock.lock()
        defer { lock.unlock() }
        if var slot = slots[key] {
            tick &+= 1
            slot.lastUse = tick
            slots[key] = slot
            stats.hits += 1
            return slot.entry
        }
        stats.misses += 1
        return nil
    }

    /// Remembers a proven chain whose leaf signed a JWS that verified, evicting the least recently used entry
    /// when full.
    func insert(_ key: Key, entry: Entry) {
        guard capacity > 0 else { return }
        lock.lock()
        defer { lock.unlock() }
        if slots[key] == nil, slots.count >= capacity,
           let oldest = slots.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            slots.removeValue(forKey: oldest)
            stats.evictions += 1
        }
        tick &+= 1
        slots[key] = Slot(entry: entry, lastUse: tick)
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
}
