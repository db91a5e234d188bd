/// The free handler slots of one consumer, shared by its partition readers and handed out in arrival order, so
/// that a hot partition cannot starve the others: every reader waits its turn (``turn()``) before it reads, and
/// queues behind the readers already waiting before its entries may start (``take(_:)``).
actor HandlerSlots {
    private struct Waiter {
        let id: UInt64
        /// 0: a turn (wait until a slot is free, take nothing); n: take n slots.
        let count: Int
        let continuation: CheckedContinuation<Int, any Error>
    }

    let capacity: Int
    private var free: Int
    private var waiters: [Waiter] = []
    private var nextID: UInt64 = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
        free = self.capacity
    }

    /// Slots taken by running handlers.
    var inUse: Int { capacity - free }

    /// Callers waiting for their turn or their slots.
    var waiting: Int { waiters.count }

    /// Waits, behind everyone already waiting, until a slot is free; returns how many are free then (≥ 1). Takes
    /// nothing: the caller reads at most that many entries, then ``take(_:)``s what it got.
    func turn() async throws -> Int {
        try await enqueue(count: 0)
    }

    /// Waits, behind everyone already waiting, until `count` slots are free, and takes them (`count` is clamped to
    /// `1...capacity`; each must be given back with ``release()``).
    func take(_ count: Int) async throws {
        _ = try await enqueue(count: min(max(count, 1), capacity))
    }

    /// ``turn()`` when it need not wait: the free slots, or nil when the caller would queue (none is free, or
    /// others wait already). Lets a reader skip the graceful-shutdown wrapper around a wait that does not happen.
    func turnIfFree() -> Int? {
        guard waiters.isEmpty, free > 0 else { return nil }
        return free
    }

    /// ``take(_:)`` when it need not wait: true when the slots were taken, false when the caller would queue.
    func takeIfFree(_ count: Int) -> Bool {
        let count = min(max(count, 1), capacity)
        guard waiters.isEmpty, free >= count else { return false }
        free -= count
        return true
    }

    /// Gives one slot back.
    func release() {
        free = min(capacity, free + 1)
        serve()
    }

    private func enqueue(count: Int) async throws -> Int {
        if waiters.isEmpty, free > 0, free >= count {
            free -= count
            return count == 0 ? free : count
        }
        nextID += 1
        let id = nextID
        return try await withTaskCancellationHandler {
            // Registered before any cancellation handler's hop to this actor can run (the body runs on the actor
            // without suspending), so `cancel` always finds a waiter that was not served yet.
            try await withCheckedThrowingContinuation { continuation in
                waiters.append(Waiter(id: id, count: count, continuation: continuation))
            }
        } onCancel: {
            Task { await self.cancel(id) }
        }
    }

    /// Serves waiters in order while the first can be served (a later one never jumps the queue).
    private func serve() {
        while let first = waiters.first, free > 0, free >= first.count {
            waiters.removeFirst()
            free -= first.count
            first.continuation.resume(returning: first.count == 0 ? free : first.count)
        }
    }

    private func cancel(_ id: UInt64) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }  // served already
        waiters.remove(at: index).continuation.resume(throwing: CancellationError())
        serve()
    }
}
