import Pipeline
import Redis
import TestSupport
import Testing

/// Counts handlers running at once and remembers the highest count.
actor ConcurrencyGauge {
    private(set) var current = 0
    private(set) var highest = 0

    func enter() {
        current += 1
        highest = max(highest, current)
    }

    func leave() {
        current -= 1
    }
}

@Suite struct StreamConsumerRuntimeTests {
    let keys = Keys(prefix: "t").jobs()
    let output = Keys(prefix: "t").verified().stream

    @Test func handlersRunConcurrentlyWithinTheBound() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let output = output
            let gauge = ConcurrencyGauge()
            let consumer = testConsumer(server, pool, stream: keys, consumer: "C", concurrency: 3) { message in
                await gauge.enter()
                try await Task.sleep(for: .milliseconds(60))
                await gauge.leave()
                return .complete(writes: [.xadd(stream: output, strings: [("n", message.entry["n"])])])
            }
            for n in 1...12 {
                _ = try await pool.xadd(keys.stream, fields: [("n", Array("\(n)".utf8))])
            }
            let run = RunningServices([consumer])
            #expect(try await eventually { try await pool.xlen(output) == 12 })
            try await run.shutdown()
            #expect(await gauge.highest == 3)
            #expect(Set(try await pool.xrange(output).map { $0["n"] }).count == 12)
        }
    }

    @Test func restartedConsumerFinishesItsOwnPendingEntriesFirst() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            // A previous run of consumer "C" took the entry and died before acknowledging it.
            _ = try await pool.xgroupCreate(keys.stream, group: "workers")
            let id = try #require(try await pool.xadd(keys.stream, fields: [("job", Array("j1".utf8))]))
            _ = try await pool.xreadgroup(group: "workers", consumer: "C", stream: keys.stream, count: 1, block: nil)

            let seen = Recorder<Int>()
            let consumer = testConsumer(server, pool, stream: keys, consumer: "C") { message in
                await seen.append(message.deliveryCount)
                return .complete
            }
            let run = RunningServices([consumer])
            // Handled at once (no min-idle wait: the claim min-idle is 60 s; 10 s allows a loaded machine), as its
            // second delivery.
            #expect(
                try await eventually(timeout: .seconds(10)) {
                    try await pool.xpendingSummary(keys.stream, group: "workers").count == 0
                })
            try await run.shutdown()
            #expect(await seen.values == [2])
            // Completed, the entry is gone: its acknowledgement deleted it.
            #expect(try await pool.xrange(keys.stream).map(\.id).contains(id) == false)
        }
    }

    @Test func slowHandlerIsNotReclaimedByItsOwnConsumer() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let output = output
            let calls = Recorder<Int>()
            // The handler takes longer than the min-idle: the consumer's own XAUTOCLAIM takes the entry
            // back, but it is already being handled here, so it is not handled twice.
            let consumer = testConsumer(
                server, pool, stream: keys, consumer: "C", claimMinIdle: .milliseconds(100),
                claimInterval: .milliseconds(20)
            ) { message in
                await calls.append(message.deliveryCount)
                try await Task.sleep(for: .milliseconds(500))
                return .complete(writes: [.xadd(stream: output, strings: [("job", "j1")])])
            }
            let run = RunningServices([consumer])
            _ = try await pool.xadd(keys.stream, fields: [("job", Array("j1".utf8))])
            #expect(try await eventually { try await pool.xlen(output) == 1 })
            try await Task.sleep(for: .milliseconds(200))
            try await run.shutdown()
            #expect(await calls.values == [1])
            #expect(try await pool.xlen(output) == 1)
        }
    }
}
