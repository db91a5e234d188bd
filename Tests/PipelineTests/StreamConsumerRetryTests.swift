import Logging
import Pipeline
import Redis
import TestSupport
import Testing

@Suite struct StreamConsumerRetryTests {
    let keys = Keys(prefix: "t").jobs()
    let output = Keys(prefix: "t").verified().stream

    /// The consumer's lines about an entry name its stream, entry id and attempt (added only when a line is logged).
    @Test func linesAboutAnEntryNameItsStreamIdAndAttempt() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            struct Flaky: Error {}
            let lines = RecordedLines()
            let logger = Logger(label: "consumer-test") { _ in RecordingLogHandler(sink: lines) }
            let consumer = testConsumer(
                server, pool, stream: keys, consumer: "C", retry: RetryPolicy(base: .seconds(60), cap: .seconds(60), maxAttempts: 5),
                logger: logger
            ) { _ in throw Flaky() }
            let run = RunningServices([consumer])
            let id = try #require(try await pool.xadd(keys.stream, fields: [("job", Array("j1".utf8))]))
            #expect(await eventually { lines.all.contains { $0.message == "Retry scheduled" } })
            try await run.shutdown()

            let about = lines.all.filter { $0.message == "Handler failed; scheduling a retry" || $0.message == "Retry scheduled" }
            #expect(about.count == 2, "\(lines.all)")
            for line in about {
                #expect(line.metadata["stream"] == .string(keys.stream), "\(line)")
                #expect(line.metadata["entry.id"] == .string(id), "\(line)")
                #expect(line.metadata["attempt"] == .string("1"), "\(line)")
                #expect(line.metadata["consumer"] == .string("C"), "\(line)")
            }
        }
    }

    @Test func failingHandlerIsRetriedWithGrowingBackoffThenCompletesOnce() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let output = output
            let calls = Recorder<(attempt: Int, lastError: String?, at: ContinuousClock.Instant)>()
            // Jitter fixed near 1: the delays are just under the ceilings, 100 ms then 200 ms.
            let consumer = testConsumer(
                server, pool, stream: keys, consumer: "C",
                retry: RetryPolicy(base: .milliseconds(100), cap: .seconds(2), maxAttempts: 5),
                clock: clock(unitRandom: 0.999)
            ) { message in
                await calls.append((message.attempt, message.lastError, .now))
                if message.attempt < 3 { return .retry(reason: "flaky \(message.attempt)") }
                return .complete(writes: [.xadd(stream: output, strings: [("attempt", "\(message.attempt)")])])
            }
            // No promoter service: the test promotes, so each retry's stay in the retry set is observed for sure.
            let promoter = RetryPromoter(streams: [keys], redis: pool, interval: .seconds(3600), logger: testLogger)
            let run = RunningServices([consumer])
            _ = try await pool.xadd(keys.stream, fields: [("job", Array("j1".utf8))])

            // After each failed attempt the job waits in the retry set, due a growing delay later; once due it is
            // promoted (not before: `promoteDue` moves nothing early) and the next attempt runs.
            var dueTimes: [Int64] = []
            for attempt in 1...2 {
                #expect(await eventually { await calls.values.count == attempt })
                let scored = try #require(
                    try await eventuallyValue {
                        try await pool.send("ZRANGE", keys.retry, "0", "-1", "WITHSCORES").array.flatMap { $0.count == 2 ? $0[1].int : nil }
                    })
                dueTimes.append(scored)
                #expect(try await eventually { (try await promoter.promoteDue()[keys.stream] ?? 0) == 1 })
                #expect(PipelineClock.system.nowMilliseconds() >= scored)
            }
            #expect(try await eventually { try await pool.xlen(output) == 1 })
            try await run.shutdown()

            let history = await calls.values
            #expect(history.map(\.attempt) == [1, 2, 3])
            #expect(history.map(\.lastError) == [nil, "flaky 1", "flaky 2"])
            #expect(history.count == 3)
            if history.count == 3 {
                #expect(history[1].at - history[0].at >= .milliseconds(95))
                #expect(history[2].at - history[1].at >= .milliseconds(195))
            }
            // The second retry was scheduled after the first was due, with twice the delay.
            #expect(dueTimes.count == 2)
            if dueTimes.count == 2 { #expect(dueTimes[1] - dueTimes[0] >= 199) }
            #expect(try await pool.xrange(output).map { $0["attempt"] } == ["3"])
            #expect(try await pool.send("ZCARD", keys.retry).int == 0)
            #expect(try await pool.xpendingSummary(keys.stream, group: "workers").count == 0)
        }
    }

    /// The runtime alone decides when a retry is due, and hands that decision to the handler's writes: a status
    /// recording `next.at` records the retry ZSET's score itself.
    @Test func retryAfterFromTheHandlerPostponesTheRetry() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let status = Keys(prefix: "t").partitionKey(0, "job", "j1")
            let consumer = testConsumer(
                server, pool, stream: keys, consumer: "C",
                retry: RetryPolicy(base: .milliseconds(10), cap: .milliseconds(10), maxAttempts: 5)
            ) { _ in
                .retry(reason: "429 Retry-After: 60", notBefore: .seconds(60)) { schedule in
                    [.hset(key: status, strings: [("attempt", String(schedule.attempt)), ("next.at", String(schedule.dueMilliseconds))])]
                }
            }
            let run = RunningServices([consumer])
            let before = PipelineClock.system.nowMilliseconds()
            _ = try await pool.xadd(keys.stream, fields: [("job", Array("j1".utf8))])
            #expect(try await eventually { try await pool.send("ZCARD", keys.retry).int == 1 })
            try await run.shutdown()
            let scored = try #require(try await pool.send("ZRANGE", keys.retry, "0", "-1", "WITHSCORES").array)
            let due = try #require(scored.last?.int)
            #expect(due >= before + 60_000)
            // About 60 s, not a longer backoff of the runtime's own; the bound leaves room for a handler that runs
            // late on a loaded machine (a CI run with clusters beside it once saw it run 10.4 s after the XADD).
            #expect(due < before + 90_000)
            #expect(try await pool.send("HGET", status, "next.at").string == String(due))
            #expect(try await pool.send("HGET", status, "attempt").string == "2")
        }
    }

    @Test func exhaustedRetriesGoToTheDeadLetterStream() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let status = Keys(prefix: "t").partitionKey(0, "job", "j1")
            let calls = Recorder<Int>()
            let consumer = testConsumer(
                server, pool, stream: keys, consumer: "C",
                retry: RetryPolicy(base: .milliseconds(20), cap: .milliseconds(40), maxAttempts: 2),
                deadLetterWrites: { _, reason in [.hset(key: status, strings: [("status", "dead"), ("reason", reason)])] }
            ) { message in
                await calls.append(message.attempt)
                return .retry(reason: "upstream down") { _ in [.hset(key: status, strings: [("status", "retrying")])] }
            }
            let promoter = RetryPromoter(streams: [keys], redis: pool, interval: .milliseconds(20), logger: testLogger)
            let run = RunningServices([consumer, promoter])
            let id = try #require(try await pool.xadd(keys.stream, fields: [("job", Array("j1".utf8))]))

            #expect(try await eventually { try await pool.xlen(keys.deadLetter) == 1 })
            try await Task.sleep(for: .milliseconds(200))
            try await run.shutdown()

            #expect(await calls.values == [1, 2])
            let dead = try #require(try await pool.xrange(keys.deadLetter).first)
            #expect(dead["job"] == "j1")
            #expect(dead["reason"].contains("upstream down"))
            #expect(dead["attempts"] == "2")
            #expect(dead["source.stream"] == keys.stream)
            #expect(dead["source.id"] != "" && dead["source.id"] != id)  // the promoted copy's id
            #expect(try await pool.send("HGET", status, "status").string == "dead")
            #expect(try await pool.xlen(output) == 0)
            #expect(try await pool.send("ZCARD", keys.retry).int == 0)
            #expect(try await pool.xpendingSummary(keys.stream, group: "workers").count == 0)
        }
    }

    @Test func poisonEntryIsDeadLetteredWithoutCallingTheHandlerAgain() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let calls = Recorder<Int>()
            // The handler "crashes" every time (leaves the entry pending); the consumer reclaims it after
            // the min-idle, and the delivery count grows with each reclaim.
            let consumer = testConsumer(
                server, pool, stream: keys, consumer: "C", claimMinIdle: .milliseconds(150),
                claimInterval: .milliseconds(30), maxDeliveries: 2
            ) { message in
                await calls.append(message.deliveryCount)
                return .abandon
            }
            let run = RunningServices([consumer])
            let id = try #require(try await pool.xadd(keys.stream, fields: [("job", Array("poison".utf8))]))

            #expect(try await eventually { try await pool.xlen(keys.deadLetter) == 1 })
            try await Task.sleep(for: .milliseconds(400))
            try await run.shutdown()

            #expect(await calls.values == [1, 2])
            let dead = try #require(try await pool.xrange(keys.deadLetter).first)
            #expect(dead["source.id"] == id)
            #expect(dead["reason"].contains("poison"))
            #expect(dead["job"] == "poison")
            #expect(try await pool.xlen(keys.deadLetter) == 1)
            #expect(try await pool.xpendingSummary(keys.stream, group: "workers").count == 0)
        }
    }
}
