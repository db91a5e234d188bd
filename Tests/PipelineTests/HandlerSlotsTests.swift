import Testing

@testable import Pipeline

/// ``HandlerSlots``: the free handler slots, handed out strictly in arrival order.
@Suite(.timeLimit(.minutes(1))) struct HandlerSlotsTests {
    @Test func waitersAreServedInArrivalOrderAndNoneJumpsTheQueue() async throws {
        let slots = HandlerSlots(capacity: 2)
        #expect(try await slots.turn() == 2)
        try await slots.take(2)
        #expect(await slots.inUse == 2)
        let served = Order()
        let a = Task { try await slots.turn() }  // a turn: waits for one free slot, takes none
        try await waitUntil { await slots.waiting == 1 }
        let b = Task {
            try await slots.take(2)
            await served.append("b")
        }
        try await waitUntil { await slots.waiting == 2 }
        let c = Task {
            _ = try await slots.turn()
            await served.append("c")
        }
        try await waitUntil { await slots.waiting == 3 }

        await slots.release()
        #expect(try await a.value == 1)
        // b needs both slots; c, behind it, waits although one is free.
        try await Task.sleep(for: .milliseconds(50))
        #expect(await served.values.isEmpty)
        await slots.release()
        try await b.value
        // b took both; c's turn comes with the next free slot.
        try await Task.sleep(for: .milliseconds(50))
        #expect(await served.values == ["b"])
        await slots.release()
        try await c.value
        #expect(await served.values == ["b", "c"])
        #expect(await slots.inUse == 1)
    }

    /// The non-waiting forms serve only when the waiting ones would not have waited: never past a queued waiter.
    @Test func takingWithoutWaitingNeverJumpsTheQueue() async throws {
        let slots = HandlerSlots(capacity: 3)
        #expect(await slots.turnIfFree() == 3)
        #expect(await slots.takeIfFree(2))
        #expect(await slots.inUse == 2)
        #expect(await slots.turnIfFree() == 1)
        #expect(await !slots.takeIfFree(2))
        #expect(await slots.inUse == 2)
        #expect(await slots.takeIfFree(0))  // clamped to one, as take(_:) clamps
        #expect(await slots.inUse == 3)
        #expect(await slots.turnIfFree() == nil)
        // A waiter queued for two slots: one free slot is not handed past it, by either form.
        let waiter = Task { try await slots.take(2) }
        try await waitUntil { await slots.waiting == 1 }
        await slots.release()
        #expect(await slots.turnIfFree() == nil)
        #expect(await !slots.takeIfFree(1))
        await slots.release()
        try await waiter.value
        #expect(await slots.inUse == 3)
        #expect(await slots.waiting == 0)
    }

    @Test func aCancelledWaiterLeavesTheQueue() async throws {
        let slots = HandlerSlots(capacity: 1)
        try await slots.take(1)
        let cancelled = Task { try await slots.take(1) }
        try await waitUntil { await slots.waiting == 1 }
        let next = Task { try await slots.take(1) }
        try await waitUntil { await slots.waiting == 2 }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        await slots.release()
        try await next.value
        #expect(await slots.inUse == 1)
        #expect(await slots.waiting == 0)
    }

    private func waitUntil(_ condition: () async -> Bool) async throws {
        for _ in 0..<500 where !(await condition()) {
            try await Task.sleep(for: .milliseconds(2))
        }
        try #require(await condition())
    }
}

/// Names appended in the order things happened.
private actor Order {
    var values: [String] = []

    func append(_ value: String) {
        values.append(value)
    }
}
