import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// `tollctl lookup ORDER_ID`, the real binary against the real simulator and a real Redis: the order's
/// transactions come back verified with their owner from the ledger; an order Apple does not know, and
/// transactions signed by a CA the deployment does not trust, end the command with exit 1.
@Suite(.serialized)
struct LookupCommandTests {
    @Test func anOrderTheSimulatorSoldShowsItsVerifiedTransactionsAndTheirOwner() async throws {
        try await StoreHarness.with { harness in
            let sold = try await harness.sim.purchase()
            let orderId = try #require(sold["orderId"] as? String)
            let id = try #require(sold["transactionId"] as? String)
            let other = try await harness.sim.purchase()
            let otherOrder = try #require(other["orderId"] as? String)
            // The ledger as the fulfiller leaves it: the chain bound to user-7, the owner's transaction record.
            _ = try await harness.redis.send("SET", harness.keys.binding(originalTransactionId: id), "user-7")
            _ = try await harness.redis.send(
                "HSET", harness.keys.transaction(user: "user-7", transactionId: id), "tid", id, "otid", id,
                "product", "com.example.coins100", "type", "Consumable", "state", "applied", "env", "Production",
                "purchase", Int64(Date().timeIntervalSince1970 * 1000))
            let environment = harness.environment(try harness.apiSettings())

            let run = try await ChildProcess.run("tollctl", arguments: ["lookup", orderId], environment: environment)
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("order \(orderId)  environment=Production  transactions=1"))
            let line = try #require(run.output.split(separator: "\n").first { $0.contains(id) })
            #expect(line.contains("verified"))
            #expect(line.contains("original=\(id)"))
            #expect(line.contains("product=com.example.coins100"))
            #expect(line.contains("purchased="))
            #expect(!line.contains("revoked="))
            #expect(line.contains("owner=user-7"), "\(run.output)")
            #expect(line.contains("ledger=applied"))

            // Sold, but bound to no one in the ledger.
            let unowned = try await ChildProcess.run("tollctl", arguments: ["lookup", otherOrder], environment: environment)
            #expect(unowned.status == 0, "\(unowned.output)")
            #expect(unowned.output.contains("owner=none"))
            #expect(!unowned.output.contains("user-7"))

            // Refunded at Apple: the revocation shows.
            try await harness.sim.post("/sim/events", ["type": "REFUND", "transactionId": id, "notify": false])
            let refunded = try await ChildProcess.run("tollctl", arguments: ["lookup", orderId], environment: environment)
            #expect(refunded.status == 0, "\(refunded.output)")
            #expect(refunded.output.contains("revoked="), "\(refunded.output)")
        }
    }

    @Test func anUnknownOrderIdFailsWithAClearMessage() async throws {
        try await StoreHarness.with { harness in
            let environment = harness.environment(try harness.apiSettings())
            let run = try await ChildProcess.run("tollctl", arguments: ["lookup", "MZZZZZZZZZ"], environment: environment)
            #expect(run.status == 1, "\(run.output)")
            #expect(run.output.contains("tollctl: error: invalid_order_id: Apple does not know order ID MZZZZZZZZZ"), "\(run.output)")
            #expect(!run.output.contains("transactions="))
        }
    }

    @Test func transactionsSignedByAnUntrustedCAAreNotShownAsGenuine() async throws {
        try await StoreHarness.with { harness in
            let sold = try await harness.sim.purchase()
            let orderId = try #require(sold["orderId"] as? String)
            let id = try #require(sold["transactionId"] as? String)
            _ = try await harness.redis.send("SET", harness.keys.binding(originalTransactionId: id), "user-7")
            // Trusting only Apple's real root, the simulator's signatures are forgeries.
            var environment = harness.environment(try harness.apiSettings())
            environment.removeValue(forKey: "TOLLGATE_ROOT_CERTS")
            let run = try await ChildProcess.run("tollctl", arguments: ["lookup", orderId], environment: environment)
            #expect(run.status == 1, "\(run.output)")
            #expect(run.output.contains("#1  NOT VERIFIED"), "\(run.output)")
            #expect(run.output.contains("did not verify"))
            #expect(!run.output.contains(id))
            #expect(!run.output.contains("product="))
            #expect(!run.output.contains("user-7"))
        }
    }

    @Test func withoutAnAPIKeyItSaysWhatIsMissing() async throws {
        try await StoreHarness.with { harness in
            let run = try await ChildProcess.run("tollctl", arguments: ["lookup", "MABC123"], environment: harness.environment())
            #expect(run.status == 1)
            #expect(run.output.contains("tollctl: error: api_not_configured"), "\(run.output)")
        }
    }
}
