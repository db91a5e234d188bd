import Core
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// `tollctl grants USER` and `tollctl audit` with labelled grants: the real binary against a real redis-server whose
/// ledger credited a real purchase and holds two grants.
@Suite struct GrantsCommandTests {
    @Test func grantsAreListedAndTheAuditReportsThemApart() async throws {
        try await LedgerHarness.with(partitions: 1) { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("c1", product: "coins100")]))
            let entitlement = try await LedgerGrants.grant(
                LedgerGrants.Request(
                    user: "alice", entitlement: "vip", until: testNow + 400 * day, reason: "beta tester", by: "ops", now: testNow),
                keys: h.keys, on: h.redis)
            _ = try await LedgerGrants.grant(
                LedgerGrants.Request(user: "alice", coins: 50, reason: "goodwill", by: "ops", now: testNow + 1), keys: h.keys, on: h.redis)

            let listed = try await ChildProcess.run("tollctl", arguments: ["grants", "alice", "--json"], environment: h.serviceEnvironment)
            #expect(listed.status == 0)
            let json = try #require(JSONValue.read(Array(listed.output.utf8)))
            #expect(json["userId"]?.string == "alice" && json["coinsGranted"]?.int == 50)
            let grants = json["grants"]?.array ?? []
            #expect(grants.count == 2)
            #expect(grants.first?["grantId"]?.string == entitlement.grant.grantId)
            #expect(grants.first?["entitlement"]?.string == "vip" && grants.first?["reason"]?.string == "beta tester")
            #expect(grants.last?["coins"]?.int == 50 && grants.last?["by"]?.string == "ops")

            let text = try await ChildProcess.run("tollctl", arguments: ["grants", "alice"], environment: h.serviceEnvironment)
            #expect(text.status == 0 && text.output.contains("\(entitlement.grant.grantId)  entitlement=vip"))

            // 150 coins stored, 100 from Apple's record and 50 granted: no difference, the grants listed apart.
            let audit = try await ChildProcess.run("tollctl", arguments: ["audit"], environment: h.serviceEnvironment)
            #expect(audit.status == 0, "\(audit.output)")
            #expect(audit.output.contains("users=1 transactions=1 differences=0"))
            #expect(audit.output.contains("granted users=1") && audit.output.contains("user=alice  grants=2  grantedCoins=50"))
        }
    }
}
