import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One in-flight `URLSessionTask` and the continuation waiting for it. Whichever comes first — the
/// task's completion, the deadline, or cancellation — resumes the continuation, exactly once: it is taken out
/// (set to `nil`) under the lock before it is resumed.
final class PendingExchange: Sendable {
    private struct State {
        var task: URLSessionTask?
        var continuation: CheckedContinuation<HTTPTransportResponse, any Error>?
        var cancelled = false
        var deadline: Task<Void, Never>?
    }

    private let state = Mutex(State())

    func start(_ task: URLSessionTask, timeout: Duration, continuation: CheckedContinuation<HTTPTransportResponse, any Error>) {
        let started = state.withLock { state in
            if state.cancelled { return false }
            state.task = task
            state.continuation = continuation
            state.deadline = Task { [weak self] in
                try? await Task.sleep(for: timeout)
                guard !Task.isCancelled else { return }
                self?.expire(after: timeout)
            }
            return true
        }
        guard started else {
            task.cancel()
            continuation.resume(throwing: CancellationError())
            return
        }
        task.resume()
    }

    /// The task completed (with a response or an error).
    func finish(_ outcome: Result<HTTPTransportResponse, any Error>) {
        guard let waiting = take() else { return }
        waiting.resume(with: outcome)
    }

    /// The surrounding Swift task was cancelled.
    func cancel() {
        state.withLock { $0.cancelled = true }
        guard let waiting = take() else { return }
        waiting.resume(throwing: CancellationError())
    }

    private func expire(after timeout: Duration) {
        guard let waiting = take() else { return }
        waiting.resume(throwing: HTTPTransportError(.timeout, "no response within \(timeout)"))
    }

    /// Takes the continuation out (once), cancels the URL task and the deadline.
    private func take() -> CheckedContinuation<HTTPTransportResponse, any Error>? {
        let (waiting, task, deadline) = state.withLock { state in
            defer {
                state.continuation = nil
                state.task = nil
                state.deadline = nil
            }
            return (state.continuation, state.task, state.deadline)
        }
        guard let waiting else { return nil }
        deadline?.cancel()
        if let task, task.state == .running { task.cancel() }
        return waiting
    }
}
