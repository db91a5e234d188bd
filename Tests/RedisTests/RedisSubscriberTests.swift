import Foundation
import Redis
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
}
