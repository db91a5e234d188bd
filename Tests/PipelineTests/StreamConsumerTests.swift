import Logging
import Pipeline
import Redis
import TestSupport
import Testing

/// A consumer with short times for tests.
func testConsumer(
    _ server: RedisServer, _ pool: RedisPool, stream: StreamKeys, consumer: String, concurrency: Int = 4,
    claimMinIdle: Duration = .seconds(60), claimInterval: Duration = .milliseconds(50),
    maxDeliveries: Int = 5, retry: RetryPolicy = RetryPolicy(base: .milliseconds(20), cap: .seconds(1), maxAttempts: 5),
    drainTimeout: Duration = .seconds(5), clock: PipelineClock = .system, sharesStream: Bool = false,
    deadLetterWrites: @escaping StreamConsumer.DeadLetterWrites = { _, _ in [] }, logger: Logger = testLogger,
    handler: @escaping StreamConsumer.Handler
) -> StreamConsumer {
    var configuration = StreamConsumerConfiguration(
        stream: stream, group: "workers", consumer: consumer, concurrency: concurrency, readCount: 8,
        block: .milliseconds(100), claimMinIdle: claimMinIdle, claimInterval: claimInterval,
        maxDeliveries: maxDeliveries, retry: retry, drainTimeout: drainTimeout
    )
    configuration.sharesStream = sharesStream
    return StreamConsumer(
        configuration: configuration,
        redis: pool, readerConfiguration: server.configuration(), clock: clock, logger: logger,
        deadLetterWrites: deadLetterWrites, handler: handler
    )
}

@Suite struct StreamConsumerTests {
    let keys = Keys(prefix: "t").jobs()
    let output = Keys(prefix: "t").verified().stream

    /// Issue 32: a stream other groups read (the events streams) is never changed by this group's outcomes: a
    /// completion is an `XACK` alone, a dead letter a copy, a retry stays pending and comes back once idle, and an
    /// entry delivered past `maxDeliveries` still reaches the handler (no poison path).
    @Test func aSharedStreamIsAcknowledgedWithXACKAloneAndNeverChanged() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let keys = Keys(prefix: "t").events()
            var ids: [String: String] = [:]
            for name in ["done", "dead", "later"] {
                ids[name] = try #require(try await pool.xadd(keys.stream, fields: [("name", Array(name.utf8))]))
            }
            let deliveries = Recorder<String>()
            let consumer = testConsumer(
                server, pool, stream: keys, consumer: "A", claimMinIdle: .milliseconds(200), maxDeliveries: 1,
                sharesStream: true
            ) { message in
                let name = message.entry.string("name") ?? ""
                await deliveries.append(name)
                switch name {
                case "dead": return .deadLetter(reason: "unreadable")
                case "later" where message.deliveryCount < 3: return .retry(reason: "database down")
                default: return .complete(writes: [])
                }
            }
            let running = RunningServices([consumer])
            let settled = await eventually {
                guard await deliveries.count == 5 else { return false }
                return (try? await pool.xpendingSummary(keys.stream, group: "workers").count) == 0
            }
            #expect(settled)
            try await running.shutdown()

            // Every entry is still in the stream, in place, for the other groups.
            #expect(try await pool.xrange(keys.stream).map(\.id) == [ids["done"], ids["dead"], ids["later"]].compactMap { $0 })
            #expect(try await pool.send("ZCARD", keys.retry).int == 0, "nothing re-added for a retry")
            let dead = try await pool.xrange(keys.deadLetter)
            #expect(dead.count == 1 && dead.first?["name"] == "dead" && dead.first?["reason"] == "unreadable")
            #expect(dead.first?["source.id"] == ids["dead"] && dead.first?["source.stream"] == keys.stream)
            // The retried entry came back twice, past maxDeliveries (1), and was completed, not poisoned.
            #expect(await deliveries.values.filter { $0 == "later" }.count == 3)
        }
    }

    @Test func crashedConsumersEntryIsReclaimedAndHandledOnce() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let id = try #require(try await pool.xadd(keys.stream, fields: [("job", Array("j1".utf8))]))
            let output = output

            // A takes the entry and hangs (a crashed worker: no ack, never reclaims itself).
            let gate = Gate()
            let aStarted = Recorder<String>()
            let consumerA = testConsumer(server, pool, stream: keys, consumer: "A", claimInterval: .seconds(60)) { message in
                await aStarted.append(message.entry.id)
                await gate.wait()
                return .complete(writes: [.xadd(stream: output, strings: [("job", "j1"), ("by", "A")])])
            }
            let runA = RunningServices([consumerA])
            #expect(await eventually { await aStarted.count == 1 })

            // B reclaims it once it has been idle for the (short) min-idle and completes it.
            let bHandled = Recorder<Int>()
            let consumerB = testConsumer(server, pool, stream: keys, consumer: "B", claimMinIdle: .milliseconds(300)) { message in
                await bHandled.append(message.deliveryCount)
                return .complete(writes: [.xadd(stream: output, strings: [("job", "j1"), ("by", "B")])])
            }
            let runB = RunningServices([consumerB])
            #expect(try await eventually { try await pool.xlen(output) == 1 })
            #expect(await bHandled.values == [2])
            #expect(try await pool.xrange(output).first?["by"] == "B")
            #expect(try await pool.xpendingSummary(keys.stream, group: "workers").count == 0)

            // A's late completion arrives: refused by the XACK gate, still exactly one output.
            await gate.open()
            try await runA.shutdown()
            try await runB.shutdown()
            #expect(await aStarted.values == [id])
            #expect(try await pool.xlen(output) == 1)
            #expect(try await pool.xrange(output).first?["by"] == "B")
        }
    }

    @Test func gracefulShutdownReturnsPromptlyAndLeavesUnfinishedEntryPending() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let slow = try #require(try await pool.xadd(keys.stream, fields: [("job", Array("slow".utf8))]))
            _ = try await pool.xadd(keys.stream, fields: [("job", Array("quick".utf8))])
            let output = output
            let started = Recorder<String>()
            let consumer = testConsumer(server, pool, stream: keys, consumer: "C", drainTimeout: .milliseconds(400)) { message in
                let job = message.entry["job"]
                await started.append(job)
                try await Task.sleep(for: job == "slow" ? .seconds(30) : .milliseconds(150))
                return .complete(writes: [.xadd(stream: output, strings: [("job", job)])])
            }
            let run = RunningServices([consumer])
            #expect(await eventually { await started.count == 2 })

            let clock = ContinuousClock()
            let elapsed = try await clock.measure { try await run.shutdown() }
            #expect(elapsed < .seconds(15), "shutdown took \(elapsed)")  // the slow handler would hold it for 30 s
            // The quick handler finished within the drain time; the slow one was cancelled, un-acked.
            #expect(try await pool.xrange(output).map { $0["job"] } == ["quick"])
            let pending = try await pool.xpending(keys.stream, group: "workers", count: 10)
            #expect(pending.map(\.id) == [slow])
        }
    }

    @Test func throwingHandlerDoesNotStopTheConsumer() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            struct Boom: Error {}
            let output = output
            let consumer = testConsumer(
                server, pool, stream: keys, consumer: "C",
                retry: RetryPolicy(base: .milliseconds(10), cap: .milliseconds(10), maxAttempts: 1)
            ) { message in
                if message.entry["job"] == "bad" { throw Boom() }
                return .complete(writes: [.xadd(stream: output, strings: [("job", message.entry["job"])])])
            }
            let run = RunningServices([consumer])
            for job in ["bad", "good1", "good2"] {
                _ = try await pool.xadd(keys.stream, fields: [("job", Array(job.utf8))])
            }
            #expect(
                try await eventually {
                    let outputs = try await pool.xlen(output)
                    let dead = try await pool.xlen(keys.deadLetter)
                    return outputs == 2 && dead == 1
                })
            let dead = try #require(try await pool.xrange(keys.deadLetter).first)
            #expect(dead["job"] == "bad")
            #expect(dead["reason"].contains("Boom"))
            try await run.shutdown()
        }
    }
}
