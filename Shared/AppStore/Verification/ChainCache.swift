package import Crypto
import Foundation
import Synchronization
package import X509

/// Certificate chains already proven to lead from an App Store leaf to a trusted root, keyed by the SHA-256 of
/// the `x5c` certificates' DER (``Key``): however the header around them varies, the same chain is the same entry.
///
/// A chain is inserted only after a JWS it carried had a valid leaf signature, so a forger can neither insert
/// an entry nor evict one with genuine certificates and a bad signature. A chain that proved valid under a JWS
/// whose signature did not verify goes to a separate tier of the same size (``rememberProven(_:entry:)``), which
/// never evicts a confirmed entry: a forger replaying one of Apple's genuine chains with bad signatures then costs
/// one P-256 verification per request, not a chain validation (about 20 times more). The exact header segments that carried a
/// verified JWS are remembered too (at most four per chain), so that the usual case — Apple's same header again —
/// skips even decoding the header. A hit skips certificate parsing and the
/// chain signatures: what is left per JWS is one P-256 verification and the validity-window check at the
/// validation time, which the entry keeps because it depends on each JWS's `signedDate`. Bounded; the least
/// recently used entry goes first. Entries hold nothing secret.
///
/// What was refused is remembered too, so that a refused chain costs a lookup the next time: chains that are not
/// leaf → intermediate → trusted root under Apple's policy, with their reason (``refusal(_:)``), and each
/// intermediate checked against the trusted roots, proven or refused (``intermediate(_:)``), so that a chain naming
/// a known intermediate skips that check and one naming a refused intermediate is refused at once. Both bounded; when
/// full they start again (proven intermediates are kept).
package final class ChainCache: Sendable {

    /// What a proven chain leaves behind.
    package struct Entry: Sendable {
        /// The leaf's key, which signs the JWS.
        package let leafKey: P256.Signing.PublicKey
        /// Validity windows of the leaf, the intermediate and the root, in ms since 1970.
        package let windows: [ValidityWindow]
        /// When the chain was proven (ms since 1970); online mode re-proves after a while.
        package let provenAt: Int64
    }

    /// One certificate's validity period, in milliseconds since 1970, both ends inclusive.
    package struct ValidityWindow: Sendable, Hashable {
        package let role: String
        package let notBefore: Int64
        package let notAfter: Int64
    }

    /// Hit, miss and eviction counts since creation, and the work refused chains cost.
    package struct Statistics: Sendable, Hashable {
        package var hits = 0
        package var misses = 0
        package var evictions = 0
        package var count = 0
        /// Chains refused from memory (refused before, or naming a refused intermediate).
        package var refusals = 0
        /// Intermediates checked against the trusted roots (one signature check each).
        package var intermediateChecks = 0
        /// Leaves checked against a proven intermediate (one signature check each).
        package var leafChecks = 0
        /// Whole chains validated (path search and policies), after the checks above passed.
        package var validations = 0
        /// Checks not made because the caller's budget for them was spent (``ChainCheckBudget``).
        package var deferred = 0
    }

    /// What checking an intermediate against the trusted roots found.
    package enum IntermediateVerdict: Sendable {
        /// Signed by a trusted root, with the WWDR OID: leaves naming it are checked against its key.
        case proven(Certificate)
        case refused(VerificationFailure)
    }

    /// Counters for the work done outside the cache.
    package enum Work: Sendable {
        case intermediateCheck, leafCheck, validation, deferred
    }

    /// The SHA-256 of a chain's certificates (each DER, length-prefixed, leaf first).
    package struct Key: Sendable, Hashable {
        let digest: [UInt8]

        package init(certificates: [[UInt8]]) {
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
    package let capacity: Int
    private let state = Mutex(State())

    /// Everything the cache changes, behind `state`'s lock.
    private struct State {
        var slots: [Key: Slot] = [:]
        /// Chains proven valid only under JWS whose signatures failed (never evicting `slots`).
        var provenOnly: [Key: Slot] = [:]
        /// Header segments (base64url bytes) of verified JWS, and the chain each carried, by ``headerHash(_:)``.
        var headers: [Int: (header: [UInt8], key: Key)] = [:]
        /// Chains refused, with the reason (``refusal(_:)``).
        var refused: [Key: VerificationFailure] = [:]
        /// Intermediates checked against the trusted roots, by their DER.
        var intermediates: [[UInt8]: IntermediateVerdict] = [:]
        var tick: UInt64 = 0
        var stats = Statistics()

        /// Marks `key` used now in `tier` and returns its entry, if it is there.
        static func use(_ key: Key, in tier: inout [Key: Slot], tick: inout UInt64) -> Entry? {
            guard var slot = tier[key] else { return nil }
            tick &+= 1
            slot.lastUse = tick
            tier[key] = slot
            return slot.entry
        }

        mutating func remember(header: ArraySlice<UInt8>, key: Key, capacity: Int) {
            if headers.count >= 4 * capacity { headers.removeAll(keepingCapacity: true) }
            headers[ChainCache.headerHash(header)] = (Array(header), key)
        }
    }

    package init(capacity: Int = 64) {
        self.capacity = max(0, capacity)
    }

    /// The entry for a chain, if it was proven before.
    func lookup(_ key: Key) -> Entry? {
        guard capacity > 0 else { return nil }
        return state.withLock { state in
            if let entry = State.use(key, in: &state.slots, tick: &state.tick)
                ?? State.use(key, in: &state.provenOnly, tick: &state.tick)
            {
                state.stats.hits += 1
                return entry
            }
            state.stats.misses += 1
            return nil
        }
    }

    /// Remembers a chain that proved valid although the JWS that carried it had a bad signature, in the tier of
    /// its own (a chain's validity does not depend on any JWS; only confirmed chains may evict confirmed ones).
    func rememberProven(_ key: Key, entry: Entry) {
        guard capacity > 0 else { return }
        state.withLock { state in
            if state.provenOnly[key] == nil, state.provenOnly.count >= capacity,
                let oldest = state.provenOnly.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
            {
                state.provenOnly.removeValue(forKey: oldest)
            }
            state.tick &+= 1
            state.provenOnly[key] = Slot(entry: entry, lastUse: state.tick)
        }
    }

    /// The chain a header segment carried in a JWS that verified before, if it is still cached.
    func lookup(header: ArraySlice<UInt8>) -> (key: Key, entry: Entry)? {
        guard capacity > 0 else { return nil }
        return state.withLock { state in
            guard let found = state.headers[Self.headerHash(header)], Self.equal(found.header, header),
                let entry = State.use(found.key, in: &state.slots, tick: &state.tick)
            else { return nil }
            state.stats.hits += 1
            return (found.key, entry)
        }
    }

    /// Remembers a proven chain whose leaf signed a JWS that verified (and the header that carried it), evicting
    /// the least recently used entry when full.
    func insert(_ key: Key, entry: Entry, header: ArraySlice<UInt8>) {
        guard capacity > 0 else { return }
        state.withLock { state in
            if state.slots[key] == nil, state.slots.count >= capacity,
                let oldest = state.slots.min(by: { $0.value.lastUse < $1.value.lastUse })?.key
            {
                state.slots.removeValue(forKey: oldest)
                state.headers = state.headers.filter { $0.value.key != oldest }
                state.stats.evictions += 1
            }
            state.tick &+= 1
            state.slots[key] = Slot(entry: entry, lastUse: state.tick)
            state.provenOnly.removeValue(forKey: key)
            state.remember(header: header, key: key, capacity: capacity)
            state.stats.count = state.slots.count
        }
    }

    /// A JWS carried by `header` verified with the cached chain `key`: remembers the header, and confirms the chain
    /// when it was only proven.
    func confirm(_ key: Key, header: ArraySlice<UInt8>) {
        guard capacity > 0 else { return }
        let proven: Slot? = state.withLock { state in
            let proven = state.slots[key] == nil ? state.provenOnly[key] : nil
            if state.slots[key] != nil { state.remember(header: header, key: key, capacity: capacity) }
            return proven
        }
        if let proven { insert(key, entry: proven.entry, header: header) }
    }

    /// Hashes a header's length, first 512 and last 64 bytes (the leaf certificate's serial number and key sit
    /// near the start): cheap on the hot path; equality is always confirmed on the whole header.
    fileprivate static func headerHash(_ header: ArraySlice<UInt8>) -> Int {
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

    /// Why `key` was refused before, if it was.
    func refusal(_ key: Key) -> VerificationFailure? {
        guard capacity > 0 else { return nil }
        return state.withLock { state in
            guard let failure = state.refused[key] else { return nil }
            state.stats.refusals += 1
            return failure
        }
    }

    /// Remembers that `key` is no chain to a trusted root, and why (at most 16 × capacity chains; then it starts again).
    func refuse(_ key: Key, _ failure: VerificationFailure) {
        guard capacity > 0 else { return }
        state.withLock { state in
            if state.refused.count >= 16 * capacity { state.refused.removeAll(keepingCapacity: true) }
            state.refused[key] = failure
        }
    }

    /// The verdict on an intermediate checked before (by its DER), if any; a refused one counts as a refusal.
    func intermediate(_ der: [UInt8]) -> IntermediateVerdict? {
        guard capacity > 0 else { return nil }
        return state.withLock { state in
            let verdict = state.intermediates[der]
            if case .refused? = verdict { state.stats.refusals += 1 }
            return verdict
        }
    }

    /// Remembers the verdict on an intermediate (at most 16 × capacity; when full, only proven ones are kept).
    func remember(intermediate der: [UInt8], _ verdict: IntermediateVerdict) {
        guard capacity > 0 else { return }
        state.withLock { state in
            if state.intermediates.count >= 16 * capacity {
                state.intermediates = state.intermediates.filter {
                    if case .proven = $0.value { return true }
                    return false
                }
                if state.intermediates.count >= capacity { state.intermediates.removeAll(keepingCapacity: true) }
            }
            state.intermediates[der] = verdict
        }
    }

    /// Counts work done outside the cache.
    func count(_ work: Work) {
        state.withLock { state in
            switch work {
            case .intermediateCheck: state.stats.intermediateChecks += 1
            case .leafCheck: state.stats.leafChecks += 1
            case .validation: state.stats.validations += 1
            case .deferred: state.stats.deferred += 1
            }
        }
    }

    /// Current counters.
    package var statistics: Statistics {
        state.withLock { state in
            var copy = state.stats
            copy.count = state.slots.count
            return copy
        }
    }
}
