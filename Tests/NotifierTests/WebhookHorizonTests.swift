import Foundation
import Pipeline
import Redis
import TestSupport
import Testing
import Webhooks

/// Issue 42 item 5: an event past the horizon is dead-lettered whether or not the endpoint's breaker is open, so an
/// endpoint that is down for longer than the horizon does not hold the events stream against its trim.
@Suite(.timeLimit(.minutes(1)))
struct WebhookHorizonTests {
    @Test func pastTheHorizonEventsAreDeadLetteredWhileTheBreakerIsOpen() async throws {
        try await NotifierRig.with { rig in
            try await withStubServer { receiver in
                await receiver.respond(to: "/hook", with: [StubResponse(status: 500)])
                for index in 0..<10 { try await rig.writer.append(user: "u\(index)") }
                var configuration = NotifierRig.fastDelivery(horizon: .milliseconds(1500))
                // The first failure opens the breaker, and it stays open far past the horizon.
                configuration.breakerThreshold = 1
                configuration.breakerCooldown = .seconds(600)
                configuration.breakerMaximumCooldown = .seconds(600)
                let replica = rig.replica(endpoint(receiver.url("/hook")), consumer: "r1", configuration: configuration)
                let dead = try await eventually(timeout: .seconds(15)) { try await rig.deadCount("crm") == 10 }
                var pending = 0
                for partition in rig.keys.partitions {
                    let keys = rig.keys.webhook("crm", partition: partition)
                    pending += try await rig.redis.xpendingSummary(keys.stream, group: "webhook:crm").count
                }
                let requests = await receiver.received().count
                try await replica.shutdown()
                let deadCount = try await rig.deadCount("crm")
                #expect(dead, "dead letters: \(deadCount) of 10")
                // Nothing left pending in the endpoint's group: the stream's trim is not held back.
                #expect(pending == 0)
                // The breaker stayed open: only the first round's requests went.
                #expect(requests <= 10)
                for index in 0..<10 { #expect(try await rig.cursor("crm", user: "u\(index)") == 1) }
            }
        }
    }
}
