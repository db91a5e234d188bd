import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One in-flight `URLSessionTask` and the continuation waiting for it. Whichever comes first — the
/// task's completion, the deadline, or cancellation — resumes the continuation, exactly once.
///
/// `@unchecked Sendable` is safe: every stored property is read and written only while `lock` is held,
/// and the continuation is taken out (set to `nil`) under the lock before it is resumed, so it can be
/// resumed at most once.
final class PendingExchange: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionTask?
    private var continuation: CheckedContinuation<HTTPTransportResponse, any Error>?
    private var cancelled = false
    private var deadline: Task<Void, Never>?

    func start(_ task: URLSessionTask, timeout: Duration, continuation: CheckedContinuation<HTTPTransportResponse, any Error>) {
        lock.lock()
        if cancelled {
            lock.unlock()
            task.cancel()
            continuation.resume(throwing: CancellationError())
            return
        }
        self.task = task
        self.continuation = continuation
        self.deadline = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            self?.expire(after: timeout)
        }
        lock.unlock()
        task.resume()
    }

    /// The task completed (with a response or an error).
    func finish(_ outcome: Result<HTTPTransportResponse, any Error>) {
        guard let waiting = take() else { return }
        waiting.resume(with: outcome)
    }

    /// The surrounding Swift task was cancelled.
    func cancel() {
        lock.lock()
        cancelled = true
        lock.unlock()
        guard let waiting = take() else { return }
        waiting.resume(throwing: CancellationError())
    }

    private func expire(after timeout: Duration) {
        guard let waiting = take() else { return }
        waiting.resume(throwing: HTTPTransportError(.timeout, "no response within \(timeout)"))
    }

    /// Takes the continuation out (once), cancels the URL task and the deadline.
    private func take() -> CheckedContinuation<HTTPTransportResponse, any Error>? {
        lock.lock()
        let waiting = continuation
        continuation = nil
        let task = self.task
        self.task = nil
        let deadline = self.deadline
        self.deadline = nil
        lock.unlock()
        guard let waiting else { return nil }
        deadline?.cancel()
        if let task, task.state == .running { task.cancel() }
        return waiting
    }
}
