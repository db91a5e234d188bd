import Logging
import Pipeline
import Redis
import ServiceLifecycle
import TestSupport

/// A connected pool with the pipeline functions loaded, for one test's server.
func connectedPool(_ server: RedisServer, size: Int = 4) async throws -> RedisPool {
    let pool = RedisPool(configuration: server.configuration(), size: size, logger: testLogger)
    try await pool.connect()
    try await PipelineFunctions.library.load(on: pool)
    return pool
}

/// Services running in a `ServiceGroup` on a background task.
struct RunningServices {
    let group: ServiceGroup
    let task: Task<Void, any Error>

    init(_ services: [any Service]) {
        let group = ServiceGroup(services: services, logger: testLogger)
        self.group = group
        self.task = Task { try await group.run() }
    }

    /// Triggers graceful shutdown and waits until every service returned.
    func shutdown() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}

/// A gate that blocks callers until opened; ignores cancellation (a handler that "never returns").
actor Gate {
    private var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }
}

extension StreamEntry {
    /// A field as a string, or "" (for compact assertions).
    subscript(_ field: String) -> String { string(field) ?? "" }
}

/// The wall clock with a fixed jitter fraction, so backoff delays are predictable.
func clock(unitRandom: Double) -> PipelineClock {
    PipelineClock(nowMilliseconds: PipelineClock.system.nowMilliseconds, unitRandom: { unitRandom })
}
