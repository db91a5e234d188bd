import Pipeline
import Redis

/// The reconciler's leader lease: one Redis key (``Keys/reconcileLease``) holding a random token, taken with
/// `SET NX PX`, renewed every third of its time to live while the holder works, and released only by its
/// holder (token-checked in ``ReconcileFunctions``). If a renewal finds the lease gone or taken — the holder
/// stalled longer than the lease — the work is cancelled; the cursor writes are fenced by the same token, so a
/// stalled former leader can never move the checkpoint.
struct ReconcileLease: Sendable {
    let redis: any RedisCommandExecutor
    let key: String
    let ttl: Duration

    private enum Step<Value: Sendable>: Sendable {
        case finished(Value)
        case renewerStopped
    }

    /// Runs `body` with the lease's token while holding the lease.
    /// - Throws: ``VerificationError/leaseHeld`` when another holder has it; ``VerificationError/leaseLost`` when it
    ///   was lost mid-way (the body is cancelled); whatever `body` throws.
    func withLease<Value: Sendable>(_ body: @escaping @Sendable (String) async throws -> Value) async throws -> Value {
        let token = Job.newID()
        guard try await ReconcileFunctions.acquire(on: redis, lease: key, token: token, ttl: ttl) else {
            throw VerificationError.leaseHeld
        }
        do {
            let value = try await withThrowingTaskGroup(of: Step<Value>.self) { group in
                group.addTask { .finished(try await body(token)) }
                group.addTask {
                    try await renew(token)
                    return .renewerStopped
                }
                defer { group.cancelAll() }
                while let step = try await group.next() {
                    if case .finished(let value) = step { return value }
                }
                throw VerificationError.leaseLost
            }
            await release(token)
            return value
        } catch {
            await release(token)
            throw error
        }
    }

    /// Gives the lease back, also when the calling task is cancelled (a verifier shutting down mid-pass): Redis
    /// calls from a cancelled task are refused, and a lease left behind would hold off every pass — `tollctl
    /// reconcile` included — until it expired. The release runs in a detached task, which does not inherit the
    /// cancellation, and is awaited; a failure leaves the lease to expire.
    private func release(_ token: String) async {
        let redis = redis
        let key = key
        await Task.detached {
            _ = try? await ReconcileFunctions.release(on: redis, lease: key, token: token)
        }.value
    }

    /// Renews every third of the lease until cancelled; throws ``VerificationError/leaseLost`` when the lease is
    /// no longer this token's. A Redis error is retried until the lease would have run out.
    private func renew(_ token: String) async throws {
        var lastRenewal = ContinuousClock.now
        while true {
            try await Task.sleep(for: ttl / 3)
            do {
                guard try await ReconcileFunctions.acquire(on: redis, lease: key, token: token, ttl: ttl) else {
                    throw VerificationError.leaseLost
                }
                lastRenewal = ContinuousClock.now
            } catch let error as VerificationError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                if ContinuousClock.now - lastRenewal >= ttl { throw VerificationError.leaseLost }
            }
        }
    }
}
