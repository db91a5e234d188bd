import Foundation

/// Chain proofs under way, by chain (``ChainCache/Key``): the first JWS carrying a new chain proves it, and every
/// other JWS carrying the same chain meanwhile waits for that proof instead of starting its own. Without this, a
/// burst of Apple's notifications right after a start (or a leaf rotation) would prove one chain once per request,
/// and spend a door's ``ChainCheckBudget`` on it.
final class ChainProofsInFlight: @unchecked Sendable {
    // @unchecked Sendable: `proofs` is only touched while `lock` is held; the tasks are Sendable.

    typealias Proof = VerificationResult<CertificateChainValidator.ProvenChain>

    private let lock = NSLock()
    private var proofs: [ChainCache.Key: Task<Proof, Never>] = [:]

    /// The result of `prove` for `key`, run once however many callers ask at the same time.
    func run(_ key: ChainCache.Key, _ prove: @escaping @Sendable () async -> Proof) async -> Proof {
        let (task, started): (Task<Proof, Never>, Bool) = lock.withLock {
            if let running = proofs[key] { return (running, false) }
            let task = Task { await prove() }
            proofs[key] = task
            return (task, true)
        }
        let proof = await task.value
        guard started else { return proof }
        lock.withLock { proofs[key] = nil }
        return proof
    }

    /// Proofs under way now.
    var count: Int { lock.withLock { proofs.count } }
}
