import Foundation
import Redis
import Synchronization
import TestSupport
import Testing

@Suite struct RedisSubscriberTests {
    /// Messages arrive; after Redis restarts the subscriber reports `subscribed` again and keeps delivering.
    @Test func deliversAndResubscribesAfterARestart() async throws {
        try await withRedisServer { server in
            let subscriber = RedisSubscriber(
                configuration: server.configuration(), channels: ["c1", "c2"],
                logger: testLogger)
            subscriber.start()
            defer { subscriber.close() }
            var events = subscriber.events.makeAsyncIterator()
            #expect(await events.next() == .subscribed)
            let publisher = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await publisher.connect()
            defer { publisher.close() }
            #expect(try await publisher.send("PUBLISH", "c2", "hello").int == 1)
            #expect(await events.next() == .message(channel: "c2", payload: Array("hello".utf8)))

            await server.kill()
            try await server.restart()
            #expect(await events.next() == .subscribed)
            var delivered = false
            for _ in 0..<50 where !delivered {
                delivered = (try? await publisher.send("PUBLISH", "c1", "again").int) == 1
                if !delivered { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(delivered)
            #expect(await events.next() == .message(channel: "c1", payload: Array("again".utf8)))
        }
    }

    @Test func closeFinishesTheStream() async throws {
        try await withRedisServer { server in
            let subscriber = RedisSubscriber(configuration: server.configuration(), channels: ["c"], logger: testLogger)
            subscriber.start()
            var events = subscriber.events.makeAsyncIterator()
            #expect(await events.next() == .subscribed)
            subscriber.close()
            #expect(await events.next() == nil)
        }
    }

    /// With a handler, every event reaches it in order, on the subscription's own thread (named for `ps` and `perf`),
    /// and the stream carries nothing but still finishes at `close()`.
    @Test func aHandlerGetsEveryEventInOrderOnTheSubscriptionThread() async throws {
        try await withRedisServer { server in
            let received = Recorded<[RedisSubscriber.Event]>([])
            let threads = Recorded<Set<String>>([])
            let subscriber = RedisSubscriber(configuration: server.configuration(), channels: ["c"], logger: testLogger)
            subscriber.start(deliveringTo: { event in
                let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
                threads.withLock { $0.insert(name.trimmingCharacters(in: .whitespacesAndNewlines)) }
                received.withLock { $0.append(event) }
            })
            let publisher = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await publisher.connect()
            defer { publisher.close() }
            for _ in 0..<100 where received.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(20)) }
            for index in 0..<50 { _ = try await publisher.send("PUBLISH", "c", "m\(index)") }
            for _ in 0..<100 where received.withLock({ $0.count < 51 }) { try await Task.sleep(for: .milliseconds(20)) }
            let expected =
                [RedisSubscriber.Event.subscribed]
                + (0..<50).map { RedisSubscriber.Event.message(channel: "c", payload: Array("m\($0)".utf8)) }
            #expect(received.withLock { $0 } == expected)
            #expect(threads.withLock { $0 } == ["tg-redis-sub"])
            subscriber.close()
            var events = subscriber.events.makeAsyncIterator()
            #expect(await events.next() == nil)
        }
    }
}

/// A value a `@Sendable` handler records into.
private final class Recorded<Value: Sendable>: Sendable {
    private let value: Mutex<Value>
    init(_ initial: Value) { value = Mutex(initial) }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result { value.withLock { body(&$0) } }
}
