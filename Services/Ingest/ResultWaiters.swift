import Core

/// The registry of requests waiting (`?wait=`) for a job to reach a final state.
///
/// A waiter registers under its job id; the ``ResultListener`` signals every waiter of a job id published on
/// the job-results channel, and every waiter after the subscription was (re)established (a message may have
/// been missed meanwhile). A signal means "read the status again": the waiter's own status read decides, so
/// spurious signals are harmless, and a signal that arrives between two waits is remembered. A signal may carry
/// the job hash as the ledger wrote it (its final write publishes it): a waiter answers a final status carried so
/// without reading the hash back (one Redis round trip less per purchase); anything else is read as before.
///
/// Bounded: at most `maxWaiters` requests wait in this process and `maxPerUser` per user; past either
/// ``register(jobID:user:)`` refuses (the caller answers `429 too_many_waiters`).
///
/// Timeouts: one ticker task per process, running only while a waiter is suspended, wakes every waiter past its
/// deadline every ``tick`` (so a wait ends at most one tick late). A timer task per wait cost a task, a
/// dispatch timer and its cancellation on every `?wait=` request.
actor ResultWaiters {
    private struct Waiter {
        var user: String
        var continuation: CheckedContinuation<Void, Never>?
        var deadline: ContinuousClock.Instant?
        var signalled = false
        /// The job hash the last signal carried, until ``nextSignal(jobID:id:timeout:)`` hands it over.
        var carried: [String: String]?
    }

    /// How often the ticker looks for waiters past their deadline.
    static let tick: Duration = .milliseconds(50)

    private let maxWaiters: Int
    private let maxPerUser: Int
    private var byJob: [String: [UInt64: Waiter]] = [:]
    private var perUser: [String: Int] = [:]
    private var total = 0
    private var nextID: UInt64 = 0
    private var suspended = 0
    private var ticker: Task<Void, Never>?

    init(maxWaiters: Int = 4096, maxPerUser: Int = 4) {
        self.maxWaiters = maxWaiters
        self.maxPerUser = maxPerUser
    }

    /// Registers a waiter of `user` for `jobID`; pass the id to ``nextSignal(jobID:id:timeout:)`` and
    /// ``unregister(jobID:id:)``. Nil when the process or the user already has the most waiters allowed.
    func register(jobID: String, user: String) -> UInt64? {
        guard total < maxWaiters, perUser[user, default: 0] < maxPerUser else { return nil }
        nextID += 1
        byJob[jobID, default: [:]][nextID] = Waiter(user: user)
        perUser[user, default: 0] += 1
        total += 1
        return nextID
    }

    func unregister(jobID: String, id: UInt64) {
        guard let waiter = byJob[jobID]?[id] else { return }
        if let continuation = waiter.continuation {
            suspended -= 1
            continuation.resume()
        }
        byJob[jobID]?[id] = nil
        if byJob[jobID]?.isEmpty == true { byJob[jobID] = nil }
        total -= 1
        let left = perUser[waiter.user, default: 1] - 1
        perUser[waiter.user] = left > 0 ? left : nil
    }

    /// Returns at the next signal (at once if one arrived since the last call), after `timeout`, or when the
    /// calling task is cancelled (a shutdown that overran its grace: the request then answers `202` at once), with
    /// the job hash the signal carried, if it carried one.
    @discardableResult
    func nextSignal(jobID: String, id: UInt64, timeout: Duration) async -> [String: String]? {
        guard let waiter = byJob[jobID]?[id] else { return nil }
        if waiter.signalled {
            byJob[jobID]?[id]?.signalled = false
            return takeCarried(jobID: jobID, id: id)
        }
        guard timeout > .zero else { return nil }
        byJob[jobID]?[id]?.deadline = ContinuousClock.now + timeout
        startTicker()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                byJob[jobID]?[id]?.continuation = continuation
                suspended += 1
            }
        } onCancel: {
            Task { await self.wake(jobID: jobID, id: id, remember: true) }
        }
        return takeCarried(jobID: jobID, id: id)
    }

    private func takeCarried(jobID: String, id: UInt64) -> [String: String]? {
        defer { byJob[jobID]?[id]?.carried = nil }
        return byJob[jobID]?[id]?.carried
    }

    private func startTicker() {
        guard ticker == nil else { return }
        ticker = Task { [weak self] in
            while true {
                try? await Task.sleep(for: Self.tick)
                guard let self, await self.expire() else { return }
            }
        }
    }

    /// Wakes the waiters past their deadline; false (and the ticker ends) when no waiter is suspended.
    private func expire() -> Bool {
        let now = ContinuousClock.now
        for (jobID, waiters) in byJob {
            for (id, waiter) in waiters where waiter.continuation != nil {
                if let deadline = waiter.deadline, deadline <= now { wake(jobID: jobID, id: id) }
            }
        }
        guard suspended > 0 else {
            ticker = nil
            return false
        }
        return true
    }

    /// Wakes the waiters of one job; `hash` is the job hash the message carried (a JSON object of strings), read
    /// only when this process has a waiter for the job (every process hears every message).
    func signal(jobID: String, carrying hash: [UInt8]? = nil) {
        guard let ids = byJob[jobID]?.keys.map({ $0 }) else { return }
        let carried = hash.flatMap(Self.stringFields)
        for id in ids {
            byJob[jobID]?[id]?.carried = carried
            wake(jobID: jobID, id: id, remember: true)
        }
    }

    /// A JSON object whose members are all strings, as a dictionary; nil for anything else.
    static func stringFields(_ json: [UInt8]) -> [String: String]? {
        guard case .object(let members)? = try? JSONReader.parse(json) else { return nil }
        var fields: [String: String] = [:]
        for (name, value) in members {
            guard case .string(let text) = value else { return nil }
            fields[name] = text
        }
        return fields
    }

    /// Wakes every waiter (after a resubscription).
    func signalAll() {
        for (jobID, waiters) in byJob {
            for id in waiters.keys { wake(jobID: jobID, id: id, remember: true) }
        }
    }

    /// How many requests wait.
    var count: Int { total }

    private func wake(jobID: String, id: UInt64, remember: Bool = false) {
        guard var waiter = byJob[jobID]?[id] else { return }
        if let continuation = waiter.continuation {
            waiter.continuation = nil
            waiter.deadline = nil
            suspended -= 1
            continuation.resume()
        } else if remember {
            waiter.signalled = true
        }
        byJob[jobID]?[id] = waiter
    }
}
