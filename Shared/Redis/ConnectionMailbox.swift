import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The queue between async callers and a connection's dedicated thread.
///
/// `@unchecked Sendable` is safe: every stored variable is only read or written while holding `condition`
/// (an `NSCondition`, which is a mutex), and each continuation is resumed exactly once, outside the lock: by
/// the thread after running its job, or by `cancel`/`close` for a job they removed from the queue.
/// `socket` is the connection's descriptor while the thread's context owns it: the thread detaches it (under
/// the lock) before freeing the context, so `close`/`cancel` can never shut down a reused descriptor.
final class ConnectionMailbox: @unchecked Sendable {
    /// One unit of work for the thread, with the continuation its result goes to.
    struct Job: Sendable {
        enum Work: Sendable {
            case connect
            case command(RedisCommand, timeout: Duration?)
            case pipeline([RedisCommand])
        }

        let id: UInt64
        let work: Work
        let continuation: CheckedContinuation<[RedisReply], any Error>

        /// Only blocking commands (those with a per-call timeout) are interrupted when their caller is
        /// cancelled; ordinary commands are short and finish.
        var isInterruptible: Bool {
            if case .command(_, let timeout) = work { return timeout != nil }
            return false
        }
    }

    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var running: Job?
    private var closed = false
    private var socket: Int32?
    private var lastJobID: UInt64 = 0

    func makeJobID() -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        lastJobID += 1
        return lastJobID
    }

    /// Queues a job, or fails it with `.closed` after `close()` or `CancellationError` if its task is cancelled.
    func submit(_ job: Job) {
        condition.lock()
        // Checked under the lock: a cancellation handler that runs later finds the job queued and removes it.
        let refusal: (any Error)? = closed ? RedisError.closed : (Task.isCancelled ? CancellationError() : nil)
        if refusal == nil {
            jobs.append(job)
            condition.signal()
        }
        condition.unlock()
        if let refusal { job.continuation.resume(throwing: refusal) }
    }

    /// Blocks the calling (dedicated) thread until a job arrives; nil once closed.
    func next() -> Job? {
        condition.lock()
        defer { condition.unlock() }
        while jobs.isEmpty && !closed {
            condition.wait()
        }
        if closed { return nil }
        let job = jobs.removeFirst()
        running = job
        return job
    }

    /// The thread has finished the running job's I/O (called before resuming its continuation).
    func finishRunning() {
        condition.lock()
        running = nil
        condition.unlock()
    }

    /// The caller of job `id` was cancelled: a queued job is removed and fails with `CancellationError`; a
    /// running blocking command is interrupted (its socket is shut down, so it fails with an unknown outcome).
    func cancel(id: UInt64) {
        condition.lock()
        var removed: Job?
        if let index = jobs.firstIndex(where: { $0.id == id }) {
            removed = jobs.remove(at: index)
        } else if let running, running.id == id, running.isInterruptible, let socket {
            _ = shutdown(socket, Int32(SHUT_RDWR))
        }
        condition.unlock()
        removed?.continuation.resume(throwing: CancellationError())
    }

    /// Sleeps the calling thread for `duration` unless closed first; returns false if closed.
    func sleep(for duration: Duration) -> Bool {
        let deadline = Date(timeIntervalSinceNow: Double(duration.microseconds) / 1_000_000)
        condition.lock()
        defer { condition.unlock() }
        while !closed && Date() < deadline {
            _ = condition.wait(until: deadline)
        }
        return !closed
    }

    /// Records the live socket, so `close()` can interrupt a blocking read. Called by the thread only.
    func attach(socket descriptor: Int32) {
        condition.lock()
        socket = descriptor
        let alreadyClosed = closed
        condition.unlock()
        if alreadyClosed { _ = shutdown(descriptor, Int32(SHUT_RDWR)) }
    }

    /// Forgets the socket; the thread calls this before it frees the context (and so closes the socket).
    func detachSocket() {
        condition.lock()
        socket = nil
        condition.unlock()
    }

    /// Refuses new jobs, fails queued ones with `.closed`, interrupts the command in flight (its socket is shut
    /// down, so a blocking read ends at once with an unknown outcome) and wakes the thread so it can exit.
    func close() {
        condition.lock()
        if let socket { _ = shutdown(socket, Int32(SHUT_RDWR)) }
        let pending = jobs
        jobs.removeAll()
        closed = true
        condition.broadcast()
        condition.unlock()
        for job in pending {
            job.continuation.resume(throwing: RedisError.closed)
        }
    }
}
