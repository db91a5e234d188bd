import CHiredis
import Core
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One dedicated thread that drives many non-blocking Redis connections through epoll.
///
/// Callers on any thread hand work over through ``submit(_:to:)``, ``cancel(id:on:)`` and ``close(_:)``: a
/// message is queued under `inbox`'s lock and the thread is woken through an eventfd only when it is not already
/// awake, so a burst of commands costs one wake-up. Everything a ``RedisChannel`` holds (its socket, hiredis
/// reader, buffers and queues) is touched on this thread only, so every command that reaches a channel
/// between two turns of the loop goes out in one `send` (auto-pipelining), and replies complete their
/// callers' continuations in order.
///
/// `@unchecked Sendable` is safe: the queued messages and whether the loop was woken live in `inbox` (a `Mutex`),
/// and every channel's `isClosed` is only read or written while holding `inbox`'s lock; `channels` and the channels' own state only on the loop thread.
final class RedisEventLoop: @unchecked Sendable {
    enum Message {
        case submit(RedisChannel, ConnectionJob)
        case cancel(RedisChannel, UInt64)
        case close(RedisChannel)
    }

    /// The process's loops: `TOLLGATE_REDIS_IO_THREADS` of them (1 to 16, default 1), started on first use.
    /// (Services check the setting at startup and refuse a bad value; here one falls back to 1.)
    static let group: [RedisEventLoop] = {
        let reader = EnvironmentReader(ProcessInfo.processInfo.environment)
        let count = (try? reader.int("TOLLGATE_REDIS_IO_THREADS", default: 1, range: 1...16)) ?? 1
        return (0..<count).map { RedisEventLoop(index: $0) }
    }()

    private static let roundRobin = Mutex(0)

    /// The next loop of the group, round robin: connections are spread over the loops.
    static func next() -> RedisEventLoop {
        let index = roundRobin.withLock { counter in
            defer { counter &+= 1 }
            return counter
        }
        return group[index % group.count]
    }

    /// Messages for the loop thread, and whether it has been woken since it last took them.
    private struct Inbox {
        var messages: [Message] = []
        var notified = false

        /// Appends `message`; true when the loop must be woken (it was not already).
        mutating func post(_ message: Message) -> Bool {
            messages.append(message)
            if notified { return false }
            notified = true
            return true
        }
    }

    private let inbox = Mutex(Inbox())
    private let epoll: Int32
    private let wakeup: Int32
    /// Loop thread only.
    private var channels: [UInt64: RedisChannel] = [:]
    private let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)

    private init(index: Int) {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        wakeup = tg_eventfd()
        _ = tg_epoll_set(epoll, EPOLL_CTL_ADD, wakeup, EPOLLIN.rawValue, 0)
        let thread = Thread { [self] in
            setCurrentThreadName("tg-redis-io-\(index)")
            run()
        }
        thread.start()
    }

    // MARK: - Any thread

    /// Queues a job for a channel, or fails it at once: `.closed` after the channel's close, and
    /// `CancellationError` when the calling task is already cancelled (checked only when the caller submits
    /// its own job, not when a pool hands over a waiting caller's).
    func submit(_ job: ConnectionJob, to channel: RedisChannel, checkingCancellation: Bool = true) {
        let (refusal, wake) = inbox.withLock { inbox -> ((any Error)?, Bool) in
            let cancelled = checkingCancellation && Task.isCancelled
            let refusal: (any Error)? = channel.isClosed ? RedisError.closed : (cancelled ? CancellationError() : nil)
            return (refusal, refusal == nil && inbox.post(.submit(channel, job)))
        }
        if let refusal { job.continuation.resume(throwing: refusal) }
        if wake { signal() }
    }

    /// The caller of job `id` was cancelled: a job not yet handed to the loop fails with `CancellationError`
    /// here; otherwise the loop removes it if unsent, or interrupts it if it is a blocking call in flight.
    func cancel(id: UInt64, on channel: RedisChannel) {
        let (removed, wake) = inbox.withLock { inbox -> (ConnectionJob?, Bool) in
            var removed: ConnectionJob?
            if let index = inbox.messages.firstIndex(where: { if case .submit(_, let job) = $0 { job.id == id } else { false } }),
                case .submit(_, let job) = inbox.messages.remove(at: index)
            {
                removed = job
            }
            return (removed, removed == nil && inbox.post(.cancel(channel, id)))
        }
        removed?.continuation.resume(throwing: CancellationError())
        if wake { signal() }
    }

    /// Refuses the channel's later jobs, fails those not yet handed over with `.closed`, and lets the loop
    /// close its socket (commands in flight fail with an unknown outcome).
    func close(_ channel: RedisChannel) {
        let (refused, wake) = inbox.withLock { inbox -> ([ConnectionJob], Bool) in
            if channel.isClosed { return ([], false) }
            channel.isClosed = true
            var refused: [ConnectionJob] = []
            inbox.messages.removeAll { message in
                guard case .submit(let owner, let job) = message, owner === channel else { return false }
                refused.append(job)
                return true
            }
            return (refused, inbox.post(.close(channel)))
        }
        for job in refused { job.continuation.resume(throwing: RedisError.closed) }
        if wake { signal() }
    }

    private func signal() {
        var one: UInt64 = 1
        _ = withUnsafeBytes(of: &one) { Glibc.write(wakeup, $0.baseAddress, 8) }
    }

    // MARK: - Loop thread

    private func run() {
        let capacity = 256
        var tokens = [UInt64](repeating: 0, count: capacity)
        var events = [UInt32](repeating: 0, count: capacity)
        var touched: [RedisChannel] = []
        while true {
            let count = tokens.withUnsafeMutableBufferPointer { tokenBuffer in
                events.withUnsafeMutableBufferPointer { eventBuffer in
                    tg_epoll_wait(epoll, tokenBuffer.baseAddress, eventBuffer.baseAddress, Int32(capacity), waitMilliseconds())
                }
            }
            for index in 0..<max(Int(count), 0) {
                if tokens[index] == 0 {
                    var value: UInt64 = 0
                    _ = withUnsafeMutableBytes(of: &value) { Glibc.read(wakeup, $0.baseAddress, 8) }
                } else if let channel = channels[tokens[index]] {
                    channel.handle(events: events[index], buffer: readBuffer)
                    touched.append(channel)
                }
            }
            let messages = inbox.withLock { inbox in
                defer {
                    inbox.messages.removeAll(keepingCapacity: true)
                    inbox.notified = false
                }
                return inbox.messages
            }
            for message in messages {
                switch message {
                case .submit(let channel, let job):
                    channels[channel.id] = channel
                    channel.enqueue(job)
                    touched.append(channel)
                case .cancel(let channel, let id):
                    channel.cancel(id: id)
                    touched.append(channel)
                case .close(let channel):
                    channel.shutDown()
                    channels[channel.id] = nil
                }
            }
            let now = ContinuousClock.now
            for channel in channels.values where channel.deadline.map({ $0 <= now }) ?? false {
                channel.deadlinePassed(now: now)
                touched.append(channel)
            }
            for channel in touched where channels[channel.id] != nil {
                channel.flush()
                channel.updateInterest(epoll: epoll)
            }
            touched.removeAll(keepingCapacity: true)
        }
    }

    /// How long epoll may sleep: until the earliest deadline of any channel (rounded up to a millisecond), or
    /// for ever.
    private func waitMilliseconds() -> Int32 {
        var earliest: ContinuousClock.Instant?
        for channel in channels.values {
            if let deadline = channel.deadline, earliest.map({ deadline < $0 }) ?? true { earliest = deadline }
        }
        guard let earliest else { return -1 }
        let remaining = earliest - ContinuousClock.now
        if remaining <= .zero { return 0 }
        return Int32(clamping: remaining.microseconds / 1_000 + 1)
    }
}
