import Core
import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@testable import ingest

/// `GET /v1/users/{userId}/events` (docs/EVENTS.md, "Pulling"): the user's events the ledger wrote, by `seq`, for a
/// service key only, with what a consumer needs to prove it missed nothing.
@Suite struct UserEventsEndpointTests {
    static func seqs(_ json: JSONValue) -> [Int] {
        (json["events"]?.array ?? []).compactMap { $0["seq"]?.int }
    }

    @Test func pagesFollowSeqAndSayWhatIsLeft() async throws {
        try await withRedisServer { server in
            let ledgerEvents = try await LedgerHarness.on(server, partitions: 1) { h in
                for n in 1...5 {
                    _ = try await h.deliver(Fixture.client("alice", [Fixture.transaction("c\(n)", product: "coins100")]))
                }
                _ = try await h.deliver(Fixture.client("bob", [Fixture.transaction("b1", product: "coins100")]))
                return try await h.events("alice").compactMap { $0.string("event") }
            }
            try await IngestHarness.withApp(server) { client in
                let service = try IngestHarness.apiKeyHeaders()
                let first = try await client.execute(uri: "/v1/users/alice/events?limit=2", method: .get, headers: service)
                #expect(first.status == .ok)
                let page = IngestHarness.json(first)
                #expect(Self.seqs(page) == [1, 2])
                #expect(page["next"]?.int == 2 && page["lastSeq"]?.int == 5 && page["hasMore"]?.bool == true)
                #expect(page["oldestSeq"]?.int == 1 && page["trimmed"]?.bool == false)

                let rest = IngestHarness.json(
                    try await client.execute(uri: "/v1/users/alice/events?after=2&limit=100", method: .get, headers: service))
                #expect(Self.seqs(rest) == [3, 4, 5])
                #expect(rest["hasMore"]?.bool == false && rest["next"]?.int == 5)

                // The bytes the ledger wrote, in order, not written again.
                let all = try await client.execute(uri: "/v1/users/alice/events", method: .get, headers: service)
                let text = String(buffer: all.body)
                #expect(text.contains("[" + ledgerEvents.joined(separator: ",") + "]"))

                let empty = IngestHarness.json(
                    try await client.execute(uri: "/v1/users/carol/events", method: .get, headers: service))
                #expect(Self.seqs(empty).isEmpty && empty["lastSeq"]?.int == 0 && empty["trimmed"]?.bool == false)
            }
        }
    }

    @Test func aTrimmedLogSaysSo() async throws {
        try await withRedisServer { server in
            try await LedgerHarness.on(server, partitions: 1) { h in
                for n in 1...4 {
                    _ = try await h.deliver(Fixture.client("alice", [Fixture.transaction("c\(n)", product: "coins100")]))
                }
                _ = try await h.redis.send("XTRIM", h.keys.userEvents(user: "alice"), "MAXLEN", "2")
            }
            try await IngestHarness.withApp(server) { client in
                let page = IngestHarness.json(
                    try await client.execute(
                        uri: "/v1/users/alice/events?after=1", method: .get, headers: try IngestHarness.apiKeyHeaders()))
                #expect(Self.seqs(page) == [3, 4])
                #expect(page["oldestSeq"]?.int == 3 && page["trimmed"]?.bool == true, "seq 2 is gone and the answer says so")
            }
        }
    }

    @Test func onlyAServiceKeyReadsAndBadQueriesAreRefused() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                let own = try await client.execute(
                    uri: "/v1/users/alice/events", method: .get, headers: try await IngestHarness.userHeaders("alice"))
                #expect(own.status == .forbidden, "a user's token reads no event log, not even its own")
                #expect(try await client.execute(uri: "/v1/users/alice/events", method: .get).status == .unauthorized)
                for query in ["after=-1", "after=x", "limit=0", "limit=1001", "after=99999999999999999999999"] {
                    let bad = try await client.execute(
                        uri: "/v1/users/alice/events?\(query)", method: .get, headers: try IngestHarness.apiKeyHeaders())
                    #expect(bad.status == .badRequest, "\(query)")
                    #expect(IngestHarness.errorCode(bad) == "invalid_request")
                }
            }
        }
    }

    @Test func theFleetFeedWalksEveryPartitionWithAnOpaqueCursor() async throws {
        try await withRedisServer { server in
            let written = try await LedgerHarness.on(server, partitions: 1) { h in
                for n in 1...5 {
                    _ = try await h.deliver(Fixture.client("user\(n % 2)", [Fixture.transaction("c\(n)", product: "coins100")]))
                }
                _ = try await h.deliver(Fixture.notification("RESCIND_CONSENT", []))
                return try await h.allEvents().compactMap { $0.string("event.id") }
            }
            try await IngestHarness.withApp(server) { client in
                let service = try IngestHarness.apiKeyHeaders()
                var read: [String] = []
                var cursor: String?
                for _ in 0..<10 {
                    let query = cursor.map { "?limit=2&cursor=\($0)" } ?? "?limit=2"
                    let page = IngestHarness.json(try await client.execute(uri: "/v1/events\(query)", method: .get, headers: service))
                    read += (page["events"]?.array ?? []).compactMap { $0["id"]?.string }
                    cursor = try #require(page["cursor"]?.string)
                    if page["hasMore"]?.bool == false { break }
                }
                #expect(read == written, "every event once, in the order written")
                #expect(written.count == 6)
                let nothingNew = IngestHarness.json(
                    try await client.execute(uri: "/v1/events?cursor=\(try #require(cursor))", method: .get, headers: service))
                #expect(nothingNew["events"]?.array?.isEmpty == true)

                for bad in ["%%%", "bm90LWEtY3Vyc29y", Base64URLForTests.encode("1-0,2-0")] {
                    let refused = try await client.execute(uri: "/v1/events?cursor=\(bad)", method: .get, headers: service)
                    #expect(refused.status == .badRequest, "\(bad)")
                }
                let user = try await client.execute(
                    uri: "/v1/events", method: .get, headers: try await IngestHarness.userHeaders("user1"))
                #expect(user.status == .forbidden)
            }
        }
    }
}

/// Base64URL without padding, for building cursors in tests.
enum Base64URLForTests {
    static func encode(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
