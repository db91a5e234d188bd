import Core
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// Issue 42: `tollctl testers add|list|remove` — the real binary against a real redis-server: a mark with an end, its
/// listing (an ended one as expired), its removal, and each change's event in the user's sequence.
@Suite struct TestersCommandTests {
    @Test func testersAreAddedListedAndRemovedWithEvents() async throws {
        try await LedgerHarness.with(partitions: 1) { h in
            let environment = h.serviceEnvironment
            let added = try await ChildProcess.run(
                "tollctl", arguments: ["testers", "add", "alice", "--for", "30d", "--reason", "TestFlight QA", "--by", "ops"],
                environment: environment)
            #expect(added.status == 0, "\(added.output)")
            #expect(added.output.contains("user alice: tester until ") && added.output.contains("seq=1"), "\(added.output)")
            let bob = try await ChildProcess.run(
                "tollctl", arguments: ["testers", "add", "bob", "--until", "2020-01-01T00:00:00Z"], environment: environment)
            #expect(bob.status != 0 && bob.output.contains("invalid_until"), "\(bob.output)")
            // An ended mark, as the ledger keeps it until removed.
            _ = try await h.redis.send(
                RedisCommand("HSET", h.keys.tester(user: "carol"), "at", "1000", "by", "ops", "until", "2000"))
            _ = try await h.redis.send(RedisCommand("ZADD", h.keys.testers(), "2000", "carol"))

            let list = try await ChildProcess.run("tollctl", arguments: ["testers", "list"], environment: environment)
            #expect(list.status == 0, "\(list.output)")
            let lines = list.output.split(separator: "\n")
            let first = String(lines.first ?? "")
            #expect(first.hasPrefix("alice  until=") && first.contains("active  by=ops  reason=TestFlight QA"), "\(list.output)")
            #expect(lines.contains { $0.hasPrefix("carol  until=1970-01-01T00:00:02.000Z  expired") }, "\(list.output)")
            #expect(list.output.contains("testers=2"))
            let json = try await ChildProcess.run("tollctl", arguments: ["testers", "list", "--json"], environment: environment)
            let object = try #require(JSONValue.read(Array((json.output.split(separator: "\n").first ?? "").utf8)))
            #expect(object["userId"]?.string == "alice" && object["active"]?.bool == true && object["reason"]?.string == "TestFlight QA")

            let removed = try await ChildProcess.run("tollctl", arguments: ["testers", "remove", "alice"], environment: environment)
            #expect(removed.status == 0 && removed.output.contains("seq=2"), "\(removed.output)")
            let again = try await ChildProcess.run("tollctl", arguments: ["testers", "remove", "alice"], environment: environment)
            #expect(again.status != 0 && again.output.contains("not_found"), "\(again.output)")

            let log = try await h.redis.xrange(h.keys.userEvents(user: "alice"))
            let types = log.compactMap { JSONValue.read($0.fields["event"] ?? [])?["type"]?.string }
            #expect(types == ["tester.added", "tester.removed"])
            let event = try #require(JSONValue.read(log.first?.fields["event"] ?? []))
            #expect(event["by"]?.string == "ops" && event["reason"]?.string == "TestFlight QA" && event["until"]?.string != nil)
        }
    }
}
