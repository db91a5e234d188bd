import Core
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// Issue 33 item 3: a production deployment keeps sandbox purchases (App Review, TestFlight) on the user's sandbox
/// side (``LedgerSide``), on the real ledger functions: never on a production balance, record or event sequence.
@Suite struct LedgerSandboxSideTests {
    /// A client's purchase as a production deployment's verifier hands it on: placed on the side of its environment.
    static func purchase(
        _ user: String, _ tid: String, product: String = "coins100", environment: String, expires: Int64? = nil
    ) -> PurchaseEvent {
        var event = Fixture.client(user, [Fixture.transaction(tid, product: product, expires: expires)], environment: environment)
        event.placeSide(deploymentIsProduction: true)
        return event
    }

    static func spend(_ h: LedgerHarness, amount: Int64, key: String) async throws -> CoinSpend.Receipt? {
        guard
            case .spent(let receipt) = try await CoinSpend(
                user: "alice", amount: amount, reason: "sword", idempotencyKey: key, by: "shop", allowSandbox: true
            )
            .run(on: h.redis, keys: h.keys, now: testNow + 1000).outcome
        else { return nil }
        return receipt
    }

    @Test func theSideFollowsTheEnvironmentOnlyInAProductionDeployment() {
        #expect(LedgerSide.of(environment: "Sandbox", deploymentIsProduction: true) == .sandbox)
        #expect(LedgerSide.of(environment: "Xcode", deploymentIsProduction: true) == .sandbox)
        #expect(LedgerSide.of(environment: "Production", deploymentIsProduction: true) == .primary)
        // A sandbox deployment has one side: its keys do not change.
        #expect(LedgerSide.of(environment: "Sandbox", deploymentIsProduction: false) == .primary)
        let keys = Keys()
        #expect(keys.account(user: "alice") == "tg:{u:alice}:account")
        #expect(keys.on(.sandbox).account(user: "alice") == "tg:{u:alice}:sbx:account")
        #expect(keys.on(.sandbox).order(user: "alice", orderNo: "o1") == keys.order(user: "alice", orderNo: "o1"))
        #expect(keys.on(.sandbox).binding(originalTransactionId: "1") == keys.binding(originalTransactionId: "1"))
        #expect(keys.account(ofKey: "tg:{u:alice}:sbx:account")! == ("alice", .sandbox))
        #expect(keys.account(ofKey: "tg:{u:alice}:account")! == ("alice", .primary))
        #expect(keys.user(ofAccountKey: "tg:{u:alice}:sbx:account") == nil)
        let sixteen = Keys(layout: try! PartitionLayout(count: 16))
        let sandbox = sixteen.on(.sandbox).account(user: "alice")
        #expect(ClusterKeySlot.slot(sandbox) == ClusterKeySlot.slot(sixteen.account(user: "alice")), "one slot for both sides")
        #expect(sixteen.account(ofKey: sandbox)! == ("alice", .sandbox))
        #expect(sixteen.user(ofAccountKey: sandbox) == nil)
    }

    /// A sandbox purchase credits the user's sandbox side: the production account, records and sequence are
    /// untouched; its event says `side: sandbox`, counts seq 1 of its own and has an id of its own; the production
    /// purchase after it is the production side's seq 1. The audit checks each side.
    @Test func aSandboxPurchaseNeverTouchesTheProductionSide() async throws {
        try await LedgerHarness.with { h in
            let outcome = try await h.deliver(Self.purchase("alice", "s1", environment: "Sandbox"))
            #expect(outcome.outcome == .fulfilled && outcome.transactions?.first?.result == "applied", "\(outcome)")
            let sandbox = h.keys.on(.sandbox)
            #expect(try await h.coins("alice") == 0)
            #expect(try await h.hash(sandbox.account(user: "alice"))["coins"] == "100")
            #expect(try await h.redis.send("EXISTS", h.keys.transaction(user: "alice", transactionId: "s1")).int == 0)
            #expect(try await h.hash(sandbox.transaction(user: "alice", transactionId: "s1"))["env"] == "Sandbox")

            _ = try await h.deliver(Self.purchase("alice", "p1", environment: "Production"))
            #expect(try await h.coins("alice") == 100)
            #expect(try await h.hash(sandbox.account(user: "alice"))["coins"] == "100")

            let events = try await h.events("alice")
            #expect(events.count == 2)
            let (first, second) = (events[0], events[1])
            #expect(first.string("side") == "sandbox" && first.string("seq") == "1")
            #expect(second.string("side") == nil && second.string("seq") == "1")
            #expect(first.string("event.id") != second.string("event.id"))
            let body = try #require(JSONValue.read(first.fields["event"] ?? []))
            #expect(body["side"]?.string == "sandbox" && body["environment"]?.string == "sandbox" && body["seq"]?.int == 1)
            let production = try #require(JSONValue.read(second.fields["event"] ?? []))
            #expect(production["side"] == nil && production["environment"]?.string == "production")
            // Each side's own log.
            #expect(try await h.redis.xrange(sandbox.userEvents(user: "alice")).map(\.id) == ["1-0"])
            #expect(try await h.redis.xrange(h.keys.userEvents(user: "alice")).map(\.id) == ["1-0"])

            let audit = try await h.audit()
            #expect(audit.users == 2 && audit.transactions == 2 && audit.differences.isEmpty, "\(audit)")
            // A hand edit of the sandbox balance is named, with its side.
            _ = try await h.redis.send("HINCRBY", sandbox.account(user: "alice"), "coins", 5)
            #expect(try await h.audit().differences == [.init(user: "alice", stored: 105, recomputed: 100, side: .sandbox)])
        }
    }

    /// Apple's refund of a sandbox purchase (a notification, no user: resolved through the chain's binding) takes the
    /// coins back from the sandbox side, never from the production balance.
    @Test func aSandboxRefundDebitsTheSandboxSideOnly() async throws {
        try await LedgerHarness.with { h in
            _ = try await h.deliver(Self.purchase("alice", "s1", environment: "Sandbox"))
            _ = try await h.deliver(Self.purchase("alice", "p1", environment: "Production"))
            var refund = Fixture.notification("REFUND", [Fixture.transaction("s1", product: "coins100", revoked: testNow)])
            refund.placeSide(deploymentIsProduction: true)
            _ = try await h.deliver(refund)
            #expect(try await h.coins("alice") == 100)
            #expect(try await h.hash(h.keys.on(.sandbox).account(user: "alice"))["coins"] == "0")
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    /// An order a tester's sandbox purchase pays is paid, and says so (`side: sandbox`), so no reader takes it for a
    /// production sale; a production purchase's order says nothing.
    @Test func anOrderPaidOnTheSandboxSideSaysSo() async throws {
        try await LedgerHarness.with { h in
            let review = try await Fixture.order(h, user: "alice", product: "coins100")
            var event = Fixture.client(
                "alice", [Fixture.transaction("s1", product: "coins100", token: review.appAccountToken)], order: review.orderNo)
            event.placeSide(deploymentIsProduction: true)
            #expect(try await h.deliver(event).outcome == .fulfilled)
            let paid = try #require(Order(hash: try await h.hash(h.keys.order(user: "alice", orderNo: review.orderNo))))
            #expect(paid.state == .paid && paid.transactionId == "s1" && paid.paidBySide == "sandbox")

            let sale = try await Fixture.order(h, user: "alice", product: "coins100")
            let bought = Fixture.client(
                "alice", [Fixture.transaction("p1", product: "coins100", token: sale.appAccountToken)], order: sale.orderNo,
                environment: "Production")
            #expect(try await h.deliver(bought).outcome == .fulfilled)
            let production = try #require(Order(hash: try await h.hash(h.keys.order(user: "alice", orderNo: sale.orderNo))))
            #expect(production.state == .paid && production.paidBySide == nil)
        }
    }

    /// A forged side on the verified stream is refused as malformed: nothing is applied.
    @Test func anUnknownSideIsAMalformedEvent() async throws {
        var event = Self.purchase("alice", "s1", environment: "Sandbox")
        event.side = "production"
        let entry = StreamEntry(id: "1-0", fields: try Dictionary(uniqueKeysWithValues: event.streamFields()))
        #expect(throws: LedgerError.self) { try LedgerDelivery(entry: entry) }
    }

    /// Where the sandbox side may pay (here `allowSandbox`), spending draws on it first, each side writing its own
    /// `coins.spent` in its own sequence; the balance answered is both sides'.
    @Test func aSpendDrawsTheSandboxSideFirst() async throws {
        try await LedgerHarness.with { h in
            _ = try await h.deliver(Self.purchase("alice", "s1", environment: "Sandbox"))
            _ = try await h.deliver(Self.purchase("alice", "p1", environment: "Production"))
            let sandbox = h.keys.on(.sandbox)

            let first = try #require(try await Self.spend(h, amount: 30, key: "k1"))
            #expect(first.balance == 170 && first.sandboxAmount == 30 && first.side == .sandbox && first.seq == 2)
            #expect(try await h.coins("alice") == 100)
            #expect(try await h.hash(sandbox.account(user: "alice"))["coins"] == "70")

            let second = try #require(try await Self.spend(h, amount: 100, key: "k2"))
            #expect(second.balance == 70 && second.sandboxAmount == 70 && second.side == .primary)
            #expect(second.seq == 2 && second.sandboxSeq == 3 && second.sandboxEventId != second.eventId)
            #expect(try await h.coins("alice") == 70)
            #expect(try await h.hash(sandbox.account(user: "alice"))["coins"] == "0")
            let spends = try await h.events("alice").filter { $0.string("event.type") == "coins.spent" }
            #expect(spends.map { $0.string("side") ?? "primary" } == ["sandbox", "sandbox", "primary"])
            #expect(spends.map { $0.string("seq") } == ["2", "3", "2"])

            let replay = try #require(try await Self.spend(h, amount: 100, key: "k2"))
            #expect(replay.replayed && replay.sandboxAmount == 70 && replay.eventId == second.eventId)
            #expect(try await Self.spend(h, amount: 71, key: "k3") == nil)
            #expect(try await h.coins("alice") == 70)
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    /// Clearing the sandbox side removes its coins, entitlements, records and sweep entries, keeps its sequence (the
    /// `sandbox.cleared` event follows the last), and leaves the production side as it was.
    @Test func clearingTheSandboxSideLeavesProductionAndTheSequenceWhole() async throws {
        try await LedgerHarness.with { h in
            _ = try await h.deliver(Self.purchase("alice", "s1", environment: "Sandbox"))
            _ = try await h.deliver(
                Self.purchase("alice", "s2", product: "vip.month", environment: "Sandbox", expires: testNow + 30 * day))
            _ = try await h.deliver(Self.purchase("alice", "p1", environment: "Production"))
            let sandbox = h.keys.on(.sandbox)
            let home = h.keys.partition(ofUser: "alice")
            #expect(try await h.redis.send("ZCARD", h.keys.subscriptionsDue(partition: home)).int == 1)
            let production = try await h.hash(h.keys.account(user: "alice"))

            let cleared = try await SandboxSide.clear(user: "alice", by: "ops", keys: h.keys, now: testNow + 5, on: h.redis)
            #expect(
                cleared
                    == .cleared(
                        coins: 100, transactions: 2, seq: 3, eventId: try #require(try await h.events("alice").last?.string("event.id"))))
            #expect(try await h.hash(sandbox.account(user: "alice")) == ["events.seq": "3"])
            #expect(try await h.redis.send("EXISTS", sandbox.transaction(user: "alice", transactionId: "s1")).int == 0)
            #expect(try await h.redis.send("EXISTS", sandbox.entitlement(user: "alice", name: "vip")).int == 0)
            #expect(try await h.redis.send("EXISTS", h.keys.transactionOwner(partition: home, transactionId: "s1")).int == 0)
            #expect(try await h.redis.send("ZCARD", h.keys.subscriptionsDue(partition: home)).int == 0)
            #expect(try await h.hash(h.keys.account(user: "alice")) == production)
            let event = try #require(JSONValue.read(try await h.events("alice").last?.fields["event"] ?? []))
            #expect(event["type"]?.string == "sandbox.cleared" && event["side"]?.string == "sandbox" && event["seq"]?.int == 3)
            #expect(event["delta"]?.int == -100 && event["balance"]?.int == 0 && event["by"]?.string == "ops")
            #expect(try await h.audit().differences.isEmpty)
            #expect(try await SandboxSide.clear(user: "alice", by: "ops", keys: h.keys, now: testNow + 6, on: h.redis) == .empty)

            // A new sandbox purchase after it counts on from the kept sequence.
            _ = try await h.deliver(Self.purchase("alice", "s3", environment: "Sandbox"))
            #expect(try await h.events("alice").last?.string("seq") == "4")
            #expect(try await h.hash(sandbox.account(user: "alice"))["coins"] == "100")
        }
    }

    /// Issue 42: the sandbox side pays only for a tester or when told to; a mark counts until its `until`, and each
    /// change of it is an event in the user's (primary) sequence.
    @Test func onlyATesterOrAnAllowedSpendDrawsTheSandboxSide() async throws {
        try await LedgerHarness.with { h in
            _ = try await h.deliver(Self.purchase("alice", "s1", environment: "Sandbox"))
            let sandbox = h.keys.on(.sandbox)
            func spend(_ amount: Int64, _ key: String, allow: Bool = false, at now: Int64 = testNow + 1000) async throws
                -> CoinSpend.Outcome
            {
                try await CoinSpend(user: "alice", amount: amount, reason: "sword", idempotencyKey: key, by: "shop", allowSandbox: allow)
                    .run(on: h.redis, keys: h.keys, now: now).outcome
            }
            #expect(try await spend(10, "k1") == .insufficient(balance: 0))
            #expect(try await h.hash(sandbox.account(user: "alice"))["coins"] == "100")

            let added = try await Testers.add(
                user: "alice", until: testNow + day, reason: "QA", by: "ops", now: testNow + 500, keys: h.keys, on: h.redis)
            guard case .changed(let seq, _) = added else {
                Issue.record("\(added)")
                return
            }
            #expect(seq == 1, "the first event of alice's production sequence")
            guard case .spent(let receipt) = try await spend(10, "k2") else {
                Issue.record("not spent")
                return
            }
            #expect(receipt.sandboxAmount == 10 && receipt.side == .sandbox && receipt.balance == 90)
            // Past the mark's end the sandbox side counts for nothing again.
            #expect(try await spend(10, "k3", at: testNow + day + 1) == .insufficient(balance: 0))
            guard case .spent = try await spend(10, "k4", allow: true, at: testNow + day + 1) else {
                Issue.record("not spent")
                return
            }
            #expect(try await h.hash(sandbox.account(user: "alice"))["coins"] == "80")

            #expect(
                try await Testers.add(
                    user: "alice", until: testNow + day, reason: "QA", by: "ops", now: testNow + 600, keys: h.keys, on: h.redis)
                    == .unchanged)
            guard case .changed = try await Testers.remove(user: "alice", by: "ops", now: testNow + 700, keys: h.keys, on: h.redis)
            else {
                Issue.record("not removed")
                return
            }
            #expect(try await Testers.remove(user: "alice", by: "ops", now: testNow + 800, keys: h.keys, on: h.redis) == .notFound)
            let types = try await h.events("alice").filter { $0.string("side") == nil }.compactMap { $0.string("event.type") }
            #expect(types == ["tester.added", "tester.removed"], "\(types)")
            #expect(try await h.audit().differences.isEmpty)
        }
    }
}
