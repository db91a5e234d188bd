import Foundation
import Pipeline
import Redis
import Synchronization
import TestSupport
import Testing
import Webhooks

/// What an endpoint's replicas share through Redis (`fleet` in Shared/Webhooks/Lua/notifier.lua): its concurrency
/// limit, split between the replicas alive, and its circuit breaker, which one replica opens for all.
@Suite(.timeLimit(.minutes(2)))
struct WebhookFleetTests {
    @Test func twoReplicasTogetherStayWithinTheEndpointsConcurrency() async throws {
        try await NotifierRig.with { rig in
            try await withStubServer { receiver in
                let arrivals = Arrivals()
                let hold = Duration.milliseconds(300)
                await receiver.respond(to: "/hook") { _ in
                    arrivals.record()
                    return StubResponse(status: 204, delay: hold)
                }
                var configuration = NotifierRig.fastDelivery()
                configuration.concurrency = 4
                configuration.fleetInterval = .milliseconds(50)
                let target = endpoint(receiver.url("/hook"))
                let replicas = [
                    rig.replica(target, consumer: "r1", configuration: configuration),
                    rig.replica(target, consumer: "r2", configuration: configuration),
                ]
                // Both have counted each other before the load starts.
                let fleet = rig.keys.webhook("crm", partition: rig.keys.partitions[0]).fleet
                #expect(await eventually { (try? await rig.redis.send(RedisCommand("ZCARD", fleet.replicas)).int) == 2 })
                try await Task.sleep(for: .milliseconds(300))
                for index in 0..<24 { try await rig.writer.append(user: "user-\(index)") }
                #expect(await eventually(timeout: .seconds(60)) { arrivals.count >= 24 })
                for replica in replicas { try await replica.shutdown() }
                // Each answer is held 300 ms, so requests that arrived within 250 ms of each other were in flight
                // together. Alone, each replica would take its own 4 (8 at once); sharing, 2 each.
                let together = arrivals.mostWithin(.milliseconds(250))
                #expect(together <= 4, "\(together) requests in flight at once")
                #expect(together >= 2)
            }
        }
    }

    @Test func aReplicaStartingWhileAnotherHasTheBreakerOpenSendsNothing() async throws {
        try await NotifierRig.with { rig in
            try await withStubServer { receiver in
                let arrivals = Arrivals()
                await receiver.respond(to: "/hook") { _ in
                    arrivals.record()
                    return StubResponse(status: 503)
                }
                for index in 0..<6 { try await rig.writer.append(user: "user-\(index)") }
                var configuration = NotifierRig.fastDelivery()
                configuration.concurrency = 2
                configuration.breakerThreshold = 2
                configuration.breakerCooldown = .seconds(60)
                configuration.breakerMaximumCooldown = .seconds(60)
                configuration.fleetInterval = .milliseconds(50)
                let target = endpoint(receiver.url("/hook"))
                let fleet = rig.keys.webhook("crm", partition: rig.keys.partitions[0]).fleet
                let first = rig.replica(target, consumer: "r1", configuration: configuration)
                // r1's breaker opens and is published.
                #expect(await eventually { (try? await rig.redis.send(RedisCommand("GET", fleet.breaker)).string) != nil })
                try await Task.sleep(for: .milliseconds(200))
                let before = arrivals.count
                #expect(before >= 2)
                // r2 starts with every event due and its own breaker closed: it adopts r1's and sends nothing.
                let second = rig.replica(target, consumer: "r2", configuration: configuration)
                #expect(await eventually { (try? await rig.redis.send(RedisCommand("ZCARD", fleet.replicas)).int) == 2 })
                try await Task.sleep(for: .seconds(1))
                #expect(arrivals.count == before)
                try await second.shutdown()
                try await first.shutdown()
            }
        }
    }
}

/// When each request reached the receiver.
final class Arrivals: Sendable {
    private let times = Mutex<[ContinuousClock.Instant]>([])

    func record() {
        times.withLock { $0.append(.now) }
    }

    var count: Int {
        times.withLock { $0.count }
    }

    /// The most arrivals within any span shorter than `span`.
    func mostWithin(_ span: Duration) -> Int {
        let sorted = times.withLock { $0 }.sorted()
        var most = 0
        var start = 0
        for end in sorted.indices {
            while sorted[end] - sorted[start] >= span { start += 1 }
            most = max(most, end - start + 1)
        }
        return most
    }
}
