import Core
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// Issue 33 (projects, docs/PROJECTS.md): each project has its own ledger. The default project's keys are today's;
/// another project's carry its id outside the hash tag, so each user's keys keep their slot; two projects' users of
/// one id are two users, on the real ledger functions.
@Suite struct LedgerProjectTests {
    static let shop2 = ProjectID("shop2")!

    @Test func theDefaultProjectKeepsTodaysKeysAndAnotherProjectsCarryItsId() throws {
        let keys = Keys()
        #expect(keys.inProject(.default) == keys)
        #expect(keys.account(user: "alice") == "tg:{u:alice}:account")
        let shop2 = keys.inProject(Self.shop2)
        #expect(shop2.account(user: "alice") == "tg:shop2:{u:alice}:account")
        #expect(shop2.on(.sandbox).account(user: "alice") == "tg:shop2:{u:alice}:sbx:account")
        #expect(shop2.order(user: "alice", orderNo: "o1") == "tg:shop2:{u:alice}:order:o1")
        #expect(shop2.appAccountToken("ABC") == "tg:shop2:{aat:abc}:order")
        #expect(shop2.binding(originalTransactionId: "1") == "tg:shop2:{otx:1}:owner")
        #expect(shop2.transactionOwner(partition: 0, transactionId: "9") == "tg:shop2:{p0}:txo:9")
        #expect(shop2.grantsDue() == "tg:shop2:{p0}:grants:due")
        #expect(shop2.subscriptionsDue() == "tg:shop2:{p0}:subs:due")
        #expect(shop2.inFlight(user: "alice") == "tg:shop2:{p0}:inflight:alice")
        #expect(shop2.submissionBucket(user: "alice") == "tg:shop2:{u:alice}:submit.rate")
        // The pipeline is the deployment's: one set of streams, job hashes and backlog for every project.
        #expect(shop2.verified().stream == keys.verified().stream)
        #expect(shop2.events().stream == keys.events().stream)
        #expect(shop2.job("j", partition: 0) == keys.job("j", partition: 0))
        #expect(shop2.backlog() == keys.backlog())
        // A scan of one project's accounts never finds another's.
        #expect(keys.user(ofAccountKey: "tg:shop2:{u:alice}:account") == nil)
        #expect(shop2.user(ofAccountKey: "tg:shop2:{u:alice}:account") == "alice")
        #expect(shop2.user(ofAccountKey: "tg:{u:alice}:account") == nil)
        // With sixteen partitions a project's user keys stay in the user's slot, beside the partition's streams.
        let sixteen = Keys(layout: try PartitionLayout(count: 16))
        let other = sixteen.inProject(Self.shop2)
        #expect(ClusterKeySlot.slot(other.account(user: "alice")) == ClusterKeySlot.slot(sixteen.account(user: "alice")))
        let home = sixteen.partition(ofUser: "alice")
        #expect(
            ClusterKeySlot.slot(other.subscriptionsDue(partition: home)) == ClusterKeySlot.slot(sixteen.verified(partition: home).stream))
    }

    @Test func projectIdsAreShortLowercaseWords() {
        #expect(ProjectID("shop-2") != nil)
        #expect(ProjectID("") == nil)
        #expect(ProjectID("Shop") == nil)
        #expect(ProjectID("a{b}") == nil)
        #expect(ProjectID("a:b") == nil)
        #expect(ProjectID(String(repeating: "a", count: 33)) == nil)
        #expect(ProjectID(field: nil) == .default)
        #expect(ProjectID(field: "x y") == nil)
        #expect(ProjectID.default.label == nil && Self.shop2.label == "shop2")
    }

    /// Applies `event` with an applier that knows the project `shop2`'s catalog.
    static func deliver(_ event: PurchaseEvent, _ h: LedgerHarness) async throws -> LedgerOutcome {
        var applier = h.applier
        applier.projectCatalogs = [Self.shop2: testCatalog]
        let id = try await h.submit(event)
        var outcome: LedgerOutcome?
        for read in try await h.read() where read.id == id {
            outcome = try await applier.apply(entry: read.entry, partition: read.partition)
        }
        guard let outcome else { throw LedgerError.unexpectedReply("no entry of job \(event.jobId) was applied") }
        return outcome
    }

    /// Alice of the default project and alice of `shop2` are two users: each purchase lands on its own project's
    /// ledger, its event says which project, and neither project's records, balance or sequence see the other's.
    @Test func twoProjectsUsersOfOneIdAreTwoLedgers() async throws {
        try await LedgerHarness.with { h in
            let first = try await Self.deliver(Fixture.client("alice", [Fixture.transaction("a1", product: "coins100")]), h)
            #expect(first.outcome == .fulfilled, "\(first)")
            var event = Fixture.client("alice", [Fixture.transaction("b1", product: "coins100")])
            event.project = "shop2"
            let second = try await Self.deliver(event, h)
            #expect(second.outcome == .fulfilled, "\(second)")
            let shop2 = h.keys.inProject(Self.shop2)
            #expect(try await h.hash(h.keys.account(user: "alice"))["coins"] == "100")
            #expect(try await h.hash(shop2.account(user: "alice"))["coins"] == "100")
            #expect(try await h.hash(h.keys.account(user: "alice"))["events.seq"] == "1")
            #expect(try await h.hash(shop2.account(user: "alice"))["events.seq"] == "1")
            #expect(try await h.redis.send("EXISTS", h.keys.transaction(user: "alice", transactionId: "b1")).int == 0)
            #expect(try await h.redis.send("EXISTS", shop2.transaction(user: "alice", transactionId: "a1")).int == 0)
            #expect(try await h.redis.send("GET", shop2.binding(originalTransactionId: "b1")).string == "alice")
            #expect(try await h.redis.send("EXISTS", h.keys.binding(originalTransactionId: "b1")).int == 0)
            let entries = try await h.events("alice")
            let projects = entries.filter { $0.string("user") == "alice" }.map { $0.string("project") }
            #expect(projects == [nil, "shop2"])
            let ids = Set(entries.compactMap { $0.string("event.id") })
            #expect(ids.count == 2, "each project's seq 1 has an id of its own")
        }
    }

    /// An event of a project this fulfiller has no catalog for is refused (dead-lettered), never applied to the
    /// default project's ledger.
    @Test func anEventOfAnUnknownProjectIsNeverAppliedElsewhere() async throws {
        try await LedgerHarness.with { h in
            var event = Fixture.client("alice", [Fixture.transaction("c1", product: "coins100")])
            event.project = "nowhere"
            await #expect(throws: LedgerError.self) { _ = try await Self.deliver(event, h) }
            event.project = "Not Valid"
            await #expect(throws: LedgerError.self) { _ = try await Self.deliver(event, h) }
            let account = try await h.hash(h.keys.account(user: "alice"))
            #expect(account["coins"] == nil)
        }
    }
}
