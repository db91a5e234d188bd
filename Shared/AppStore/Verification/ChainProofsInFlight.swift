import Foundation
import Synchronization

/// Chain proofs under way, by chain (``ChainCache/Key``): the first JWS carrying a new chain proves it, and every
/// other JWS carrying the same chain meanwhile waits for that proof instead of starting its own. Without this, a
/// burst of Apple's notifications right after a start (or a leaf rotation) would prove one chain once per request,
/// and spend a door's ``ChainCheckBudget`` on it.
final class ChainProofsInFlight: Sendable {

    typealias Proof = VerificationResult<CertificateChainValidator.ProvenChain>

    private let proofs = Mutex<[ChainCache.Key: Task<Proof, Never>]>([:])

    /// The result of `prove` for `key`, run once however many callers ask at the same time.
    func run(_ key: ChainCache.Key, _ prove: @escaping @Sendable () async -> Proof) async -> Proof {
        let (task, started): (Task<Proof, Never>, Bool) = proofs.withLock { proofs in
            if let running = proofs[key] { return (running, false) }
            let task = Task { await prove() }
            proofs[key] = task
            return (task, true)
        }
        let proof = await task.value
        guard started else { return proof }
        proofs.withLock { $0[key] = nil }
        return proof
    }

    /// Proofs under way now.
    var count: Int { proofs.withLock { $0.count } }
}
