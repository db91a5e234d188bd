/// The registry of requests waiting (`?wait=`) for a job to reach a final state.
///
/// A waiter registers under its job id; the ``ResultListener`` signals every waiter of a job id published on
/// the job-results channel, and every waiter after the subscription was (re)established (a message may have
/// been missed meanwhile). A signal only means "read the status again": the waiter's own status read decides,
/// so spurious signals are harmless, and a signal that arrives between two waits is remembered.
actor ResultWaiters {
    private struct Waiter {
        var continuation: CheckedContinuation<Void, Never>?
        var signalled = false
    }

    private var byJob: [String: [UInt64: Waiter]] = [:]
    private var nextID: UInt64 = 0

    /// Registers a waiter for `jobID`; pass the id to ``nextSignal(jobID:id:timeout:)`` and ``unregister(jobID:id:)``.
    func register(jobID: String) -> UInt64 {
        nextID += 1
        byJob[jobID, default: [:]][nextID] = Waiter()
        return nextID
    }

    func unregister(jobID: String, id: UInt64) {
        byJob[jobID]?[id]?.continuation?.resume()
        byJob[jobID]?[id] = nil
        if byJob[jobID]?.isEmpty == true { byJob[jobID] = nil }
    }

    /// Returns at the next signal (at once if one arrived since the last call) or after `timeout`.
    func nextSignal(jobID: String, id: UInt64, timeout: Duration) async {
        guard let waiter = byJob[jobID]?[id] else { return }
        if waiter.signalled {
            byJob[jobID]?[id]?.signalled = false
            return
        }
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            await self?.wake(jobID: jobID, id: id)
        }
        await withCheckedContinuation { continuation in
            byJob[jobID]?[id]?.continuation = continuation
        }
        timer.cancel()
    }

    /// Wakes the waiters of one job.
    func signal(jobID: String) {
        for id in byJob[jobID]?.keys.map({ $0 }) ?? [] { wake(jobID: jobID, id: id, remember: true) }
    }

    /// Wakes every waiter (after a resubscription).
    func signalAll() {
        for (jobID, waiters) in byJob {
            for id in waiters.keys { wake(jobID: jobID, id: id, remember: true) }
        }
    }

    /// How many requests wait.
    var count: Int { byJob.values.reduce(0) { $0 + $1.count } }

    private func wake(jobID: String, id: UInt64, remember: Bool = false) {
        guard var waiter = byJob[jobID]?[id] else { return }
        if let continuation = waiter.continuation {
            waiter.continuation = nil
            continuation.resume()
        } else if remember {
            waiter.signalled = true
        }
        byJob[jobID]?[id] = waiter
    }
}
