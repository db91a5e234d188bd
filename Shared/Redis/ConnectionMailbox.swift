import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The queue between async callers and a connection's dedicated thread.
///
/// `@unchecked Sendable` is safe: `jobs`, `closed` and `socket` are only read or written while holding
/// `condition` (an `NSCondition`, which is a mutex), and continuations are resumed outside the lock exactly
/// once: either by the thread after running the job, or by `close()` for jobs it removed from the queue.
/// `socket` is the connection's file descriptor while the thread's context owns it: the thread detaches it
/// (under the lock) before freeing the context, so `close()` can never shut down a reused descriptor.
final class ConnectionMailbox: @unchecked Sendable {
    /// One unit of work for the thread, with the continuation its result goes to.
    struct Job: Sendable {
        enum Work: Sendable {
            case connect
            case command(RedisCommand, timeout: Duration?)
            case pipeline([RedisCommand])
        }

        let work: Work
        let continuation: CheckedContinuation<[RedisReply], any Error>
    }

    private let condition = NSCondition()
    private var jobs: [Job] = []
    private var head = 0
    private var closed = false
    private var socket: Int32?

    /// Queues a job, or fails it with `.closed` after `close()`.
    func submit(_ job: Job) {
        condition.lock()
        if closed {
            condition.unlock()
            job.continuation.resume(throwing: RedisError.closed)
            return
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Blocks the calling (dedicated) thread until a job arrives; nil once closed.
    func next() -> Job? {
        condition.lock()
        defer { condition.unlock() }
        while head == jobs.count && !closed {
            condition.wait()
        }
        if closed { return nil }
        let job = jobs[head]
        head += 1
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        }
        return job
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

    var isClosed: Bool {
        condition.lock()
        defer { condition.unlock() }
        return closed
    }

    /// Refuses new jobs, fails queued ones with `.closed`, interrupts the command in flight (its socket is shut
    /// down, so a blocking read ends at once with an unknown outcome) and wakes the thread so it can exit.
    func close() {
        condition.lock()
        if let socket { _ = shutdown(socket, Int32(SHUT_RDWR)) }
        let pending = jobs[head...]
        jobs.removeAll()
        head = 0
        closed = true
        condition.broadcast()
        condition.unlock()
        for job in pending {
            job.continuation.resume(throwing: RedisError.closed)
        }
    }
}
