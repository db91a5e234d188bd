import AppStore
import Foundation
import Synchronization

/// The active faults, and counters of the calls each part of the simulator answered. One lock, taken once
/// per call, so that the `verifyReceipt` path stays cheap.
final class FaultInjector: Sendable {
    private struct State {
        var rules: [FaultRule] = []
        var nextId = 1
        var requests: [String: Int] = [:]
    }

    private let state = Mutex(State())

    func add(_ request: FaultRequest) throws(SimError) -> FaultRule {
        let id = state.withLock { state in
            defer { state.nextId += 1 }
            return state.nextId
        }
        let rule = try FaultRule(id: id, request: request)
        state.withLock { $0.rules.append(rule) }
        return rule
    }

    /// Removes every fault (counters stay).
    func clear() {
        state.withLock { $0.rules.removeAll() }
    }

    /// Counts a call under `counter` and returns the fault that applies to it, if any (consuming one of
    /// its `times`).
    func decide(_ target: FaultTarget, environment: AppStoreEnvironment?, counter: String) -> FaultDecision? {
        state.withLock { state in
            state.requests[counter, default: 0] += 1
            guard !state.rules.isEmpty else { return nil }
            for index in state.rules.indices {
                let rule = state.rules[index]
                guard rule.target == target, rule.remaining != 0 else { continue }
                if let wanted = rule.environment, wanted != environment?.rawValue { continue }
                if let rate = rule.rate, Double.random(in: 0..<1) >= rate { continue }
                if let remaining = rule.remaining { state.rules[index].remaining = remaining - 1 }
                state.rules[index].served += 1
                return FaultDecision(
                    status: rule.status, delay: rule.delayMs.map { .milliseconds($0) }, retryAfter: rule.retryAfter,
                    errorCode: rule.errorCode)
            }
            return nil
        }
    }

    /// The faults (exhausted ones included until cleared) and the call counters.
    func snapshot() -> (rules: [FaultRule], requests: [String: Int]) {
        state.withLock { ($0.rules, $0.requests) }
    }
}
