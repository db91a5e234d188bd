import Core
import Synchronization

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
///
/// A lock, not an actor: ``signal(jobID:carrying:)`` runs on the subscription's own thread as each message arrives
/// (``RedisSubscriber/start(deliveringTo:)``) and resumes the waiting request directly. Through an actor, each
/// result crossed two more hand-offs (the subscription's stream to a listener task, that task to the actor) before
/// the request's task ran. Continuations are resumed after the lock is released.
final class ResultWaiters: Sendable {
    private struct Waiter {
        var user: String
        var continuation: CheckedContinuation<Void, Never>?
        var deadline: ContinuousClock.Instant?
        var signalled = false
        /// The job hash the last signal carried, until ``nextSignal(jobID:id:timeout:)`` hands it over.
        var carried: [String: String]?
    }

    private struct State {
        var byJob: [String: [UInt64: Waiter]] = [:]
        var perUser: [String: Int] = [:]
        var total = 0
        var nextID: UInt64 = 0
        var suspended = 0
        var tickerRunning = false

        /// Wakes one waiter: returns its continuation to resume (after the lock), or remembers the signal.
        mutating func wake(jobID: String, id: UInt64, remember: Bool = false) -> CheckedContinuation<Void, Never>? {
            guard var waiter = byJob[jobID]?[id] else { return nil }
            let continuation = waiter.continuation
            if continuation != nil {
                waiter.continuation = nil
                waiter.deadline = nil
                suspended -= 1
            } else if remember {
                waiter.signalled = true
            }
            byJob[jobID]?[id] = waiter
            return continuation
        }

        mutating func takeCarried(jobID: String, id: UInt64) -> [String: String]? {
            defer { byJob[jobID]?[id]?.carried = nil }
            return byJob[jobID]?[id]?.carried
        }
    }

    /// How often the ticker looks for waiters past their deadline.
    static let tick: Duration = .milliseconds(50)

    private let maxWaiters: Int
    private let maxPerUser: Int
    private let state = Mutex(State())

    init(maxWaiters: Int = 4096, maxPerUser: Int = 4) {
        self.maxWaiters = maxWaiters
        self.maxPerUser = maxPerUser
    }

    /// Registers a waiter of `user` for `jobID`; pass the id to ``nextSignal(jobID:id:timeout:)`` and
    /// ``unregister(jobID:id:)``. Nil when the process or the user already has the most waiters allowed.
    func register(jobID: String, user: String) -> UInt64? {
        state.withLock { state in
            guard state.total < maxWaiters, state.perUser[user, default: 0] < maxPerUser else { return nil }
            state.nextID += 1
            state.byJob[jobID, default: [:]][state.nextID] = Waiter(user: user)
            state.perUser[user, default: 0] += 1
            state.total += 1
            return state.nextID
        }
    }

    func unregister(jobID: String, id: UInt64) {
        let continuation: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard let waiter = state.byJob[jobID]?[id] else { return nil }
            if waiter.continuation != nil { state.suspended -= 1 }
            state.byJob[jobID]?[id] = nil
            if state.byJob[jobID]?.isEmpty == true { state.byJob[jobID] = nil }
            state.total -= 1
            let left = state.perUser[waiter.user, default: 1] - 1
            state.perUser[waiter.user] = left > 0 ? left : nil
            return waiter.continuation
        }
        continuation?.resume()
    }

    /// Returns at the next signal (at once if one arrived since the last call), after `timeout`, or when the
    /// calling task is cancelled (a shutdown that overran its grace: the request then answers `202` at once), with
    /// the job hash the signal carried, if it carried one.
    @discardableResult
    func nextSignal(jobID: String, id: UInt64, timeout: Duration) async -> [String: String]? {
        guard timeout > .zero else {
            return state.withLock { state in
                guard state.byJob[jobID]?[id]?.signalled == true else { return nil }
                state.byJob[jobID]?[id]?.signalled = false
                return state.takeCarried(jobID: jobID, id: id)
            }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // One look under the lock decides: a signal remembered since the last call (or a waiter gone, or a
                // cancelled task) ends the wait at once; otherwise the continuation is left for the next signal.
                let suspended: Bool = state.withLock { state in
                    guard let waiter = state.byJob[jobID]?[id], !Task.isCancelled else { return false }
                    if waiter.signalled {
                        state.byJob[jobID]?[id]?.signalled = false
                        return false
                    }
                    state.byJob[jobID]?[id]?.continuation = continuation
                    state.byJob[jobID]?[id]?.deadline = ContinuousClock.now + timeout
                    state.suspended += 1
                    startTicker(&state)
                    return true
                }
                if !suspended { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.wake(jobID: jobID, id: id, remember: true) }?.resume()
        }
        return state.withLock { $0.takeCarried(jobID: jobID, id: id) }
    }

    /// Starts the ticker unless it runs (called holding the lock).
    private func startTicker(_ state: inout State) {
        guard !state.tickerRunning else { return }
        state.tickerRunning = true
        Task { [weak self] in
            while true {
                try? await Task.sleep(for: Self.tick)
                guard let self, self.expire() else { return }
            }
        }
    }

    /// Wakes the waiters past their deadline; false (and the ticker ends) when no waiter is suspended.
    private func expire() -> Bool {
        let now = ContinuousClock.now
        let (expired, running): ([CheckedContinuation<Void, Never>], Bool) = state.withLock { state in
            var expired: [CheckedContinuation<Void, Never>] = []
            for (jobID, waiters) in state.byJob {
                for (id, waiter) in waiters where waiter.continuation != nil {
                    if let deadline = waiter.deadline, deadline <= now, let continuation = state.wake(jobID: jobID, id: id) {
                        expired.append(continuation)
                    }
                }
            }
            state.tickerRunning = state.suspended > 0
            return (expired, state.tickerRunning)
        }
        for continuation in expired { continuation.resume() }
        return running
    }

    /// Wakes the waiters of one job; `hash` is the job hash the message carried (a JSON object of strings), read
    /// only when this process has a waiter for the job (every process hears every message).
    func signal(jobID: String, carrying hash: [UInt8]? = nil) {
        guard state.withLock({ $0.byJob[jobID] != nil }) else { return }
        let carried = hash.flatMap(Self.stringFields)
        let woken: [CheckedContinuation<Void, Never>] = state.withLock { state in
            guard let ids = state.byJob[jobID]?.keys.map({ $0 }) else { return [] }
            return ids.compactMap { id in
                state.byJob[jobID]?[id]?.carried = carried
                return state.wake(jobID: jobID, id: id, remember: true)
            }
        }
        for continuation in woken { continuation.resume() }
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
        let woken: [CheckedContinuation<Void, Never>] = state.withLock { state in
            var woken: [CheckedContinuation<Void, Never>] = []
            for (jobID, waiters) in state.byJob {
                for id in waiters.keys {
                    if let continuation = state.wake(jobID: jobID, id: id, remember: true) { woken.append(continuation) }
                }
            }
            return woken
        }
        for continuation in woken { continuation.resume() }
    }

    /// How many requests wait.
    var count: Int { state.withLock { $0.total } }
}
