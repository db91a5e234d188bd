import Foundation

/// The queue between async callers and a connection's dedicated thread.
///
/// `@unchecked Sendable` is safe: `jobs` and `closed` are only read or written while holding `condition`
/// (an `NSCondition`, which is a mutex), and continuations are resumed outside the lock exactly once: either
/// by the thread after running the job, or by `close()` for jobs it removed from the queue.
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

    var isClosed: Bool {
        condition.lock()
        defer { condition.unlock() }
        return closed
    }

    /// Refuses new jobs, fails queued ones with `.closed` and wakes the thread so it can exit.
    func close() {
        condition.lock()
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
