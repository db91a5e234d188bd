import Core
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@testable import ingest

/// Issue 42 items 1 and 2: nothing on a user's sandbox side (a production deployment's App Review and TestFlight
/// purchases, free to anyone with a TestFlight link) becomes production value unless the deployment
/// (`TOLLGATE_SANDBOX_VALUE=everyone`) or the request (`allowSandbox`) says so, or the user is a tester. Against a real
/// ingest and redis-server; the sides are written as the fulfiller writes them.
@Suite struct SandboxValueTests {
    static let keys = Keys(prefix: "tg")
    static let month = "com.example.vip.month"

    static func catalog() throws -> Catalog {
        try Catalog(products: [
            Product(
                productId: month, type: .autoRenewable, entitlement: "vip",
                offers: [PromotionalOffer(id: "winback", eligibility: .lapsed)], subscriptionGroup: "premium")
        ])
    }

    /// Writes account fields of `side` as the fulfiller does.
    static func account(
        _ redis: RedisConnection, _ user: String, side: LedgerSide = .primary, _ fields: [String: String]
    ) async throws {
        var arguments: [any RedisArgumentConvertible] = [keys.on(side).account(user: user)]
        for (name, value) in fields { arguments += [name, value] }
        _ = try await redis.send(RedisCommand("HSET", arguments: arguments))
    }

    static func spend(
        _ client: any TestClientProtocol, user: String = "alice", amount: Int, key: String, allowSandbox: Bool? = nil
    ) async throws -> TestResponse {
        let allow = allowSandbox.map { #","allowSandbox":\#($0)"# } ?? ""
        return try await client.execute(
            uri: "/v1/users/\(user)/coins/spend", method: .post, headers: try IngestHarness.apiKeyHeaders(IngestHarness.key(only: .spend)),
            body: ByteBuffer(string: #"{"amount":\#(amount),"reason":"sword","idempotencyKey":"\#(key)"\#(allow)}"#))
    }

    static func entitlements(_ client: any TestClientProtocol, user: String = "alice") async throws -> TestResponse {
        try await client.execute(
            uri: "/v1/users/\(user)/entitlements", method: .get, headers: try await IngestHarness.userHeaders(user))
    }

    static var nowMilliseconds: Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    /// Item 1: a user with 100 production coins and 1,500 free sandbox coins (a public TestFlight link) spends only
    /// production coins: 150 is refused with the production balance, 50 is paid by production alone, and the sandbox
    /// side keeps every coin.
    @Test func aNonTesterSpendNeverDrawsSandboxCoins() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await Self.account(redis, "alice", ["coins": "100"])
            try await Self.account(redis, "alice", side: .sandbox, ["coins": "1500"])
            try await IngestHarness.withApp(server) { client in
                let refused = try await Self.spend(client, amount: 150, key: "k1")
                #expect(refused.status == .conflict, "\(IngestHarness.json(refused))")
                #expect(IngestHarness.errorCode(refused) == "insufficient_coins")
                #expect(IngestHarness.json(refused)["error"]?["balance"]?.int == 100, "\(IngestHarness.json(refused))")

                let paid = try await Self.spend(client, amount: 50, key: "k2")
                #expect(paid.status == .ok, "\(IngestHarness.json(paid))")
                let answer = IngestHarness.json(paid)
                #expect(answer["balance"]?.int == 50 && answer["sandboxAmount"] == nil, "\(answer)")
                #expect(try await redis.hgetall(Self.keys.account(user: "alice"))["coins"] == "50")
                #expect(try await redis.hgetall(Self.keys.on(.sandbox).account(user: "alice"))["coins"] == "1500")
            }
        }
    }

    /// Item 1: the buyer's entitlements read counts production alone at the top level; the sandbox side is a block of
    /// its own (`sandbox`), never merged for a user who is not a tester.
    @Test func theEntitlementsReadKeepsTheSandboxSideInABlockOfItsOwn() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            let future = String(Self.nowMilliseconds + 86_400_000)
            try await Self.account(redis, "alice", ["coins": "100"])
            try await Self.account(
                redis, "alice", side: .sandbox,
                ["coins": "1500", "ent:vip:state": "active", "ent:vip:expires": future, "ent:vip:autorenew": "1"])
            try await IngestHarness.withApp(server) { client in
                let response = try await Self.entitlements(client)
                #expect(response.status == .ok)
                let view = IngestHarness.json(response)
                #expect(view["coins"]?.int == 100, "\(view)")
                #expect(view["coinsSandbox"] == nil, "\(view)")
                #expect(view["entitlements"]?.array?.isEmpty == true, "\(view)")
                #expect(view["sandboxMerged"]?.bool == false, "\(view)")
                let sandbox = try #require(view["sandbox"], "\(view)")
                #expect(sandbox["coins"]?.int == 1500, "\(view)")
                let rows = sandbox["entitlements"]?.array ?? []
                #expect(rows.count == 1 && rows.first?["entitlement"]?.string == "vip", "\(view)")
                #expect(rows.first?["state"]?.string == "active" && rows.first?["environment"]?.string == "sandbox", "\(view)")
            }
        }
    }

    /// Item 2: one expired sandbox subscription (a free 2-second TestFlight purchase) does not make a user who never
    /// paid "lapsed": the win-back offer is refused, with no signature.
    @Test func sandboxHistoryDoesNotMakeAUserLapsed() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            let past = String(Self.nowMilliseconds - 86_400_000)
            try await Self.account(redis, "alice", side: .sandbox, ["ent:vip:state": "expired", "ent:vip:expires": past])
            try await OfferKeyFixture.withApp(server, catalog: try Self.catalog()) { client, _ in
                let response = try await client.execute(
                    uri: "/v1/offers/promotional", method: .post, headers: try await IngestHarness.userHeaders("alice"),
                    body: ByteBuffer(string: #"{"productId":"\#(Self.month)","offerId":"winback"}"#))
                #expect(response.status == .forbidden, "\(IngestHarness.json(response))")
                #expect(IngestHarness.errorCode(response) == "offer_not_eligible")
                #expect(IngestHarness.json(response)["signatureV2"] == nil)
            }
        }
    }

    static let adminKey = IngestHarness.key(only: .admin)

    static func admin(
        _ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, key: String = adminKey, body: String? = nil
    ) async throws -> TestResponse {
        try await client.execute(
            uri: uri, method: method, headers: try IngestHarness.apiKeyHeaders(key), body: body.map { ByteBuffer(string: $0) })
    }

    /// The sandbox side pays where the request (`allowSandbox: true`), the user (a tester, until their mark ends) or the
    /// deployment (`TOLLGATE_SANDBOX_VALUE=everyone`, today's behaviour) says so — first, as before.
    @Test func allowSandboxTestersAndEveryoneLetTheSandboxSidePay() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            for user in ["alice", "bob", "carol", "dave"] {
                try await Self.account(redis, user, ["coins": "100"])
                try await Self.account(redis, user, side: .sandbox, ["coins": "1500"])
            }
            // carol's mark ended an hour ago.
            _ = try await redis.send(
                RedisCommand(
                    "HSET", Self.keys.tester(user: "carol"), "at", String(Self.nowMilliseconds - 7_200_000), "by", "ops", "until",
                    String(Self.nowMilliseconds - 3_600_000)))
            try await IngestHarness.withApp(server) { client in
                let allowed = try await Self.spend(client, amount: 150, key: "a1", allowSandbox: true)
                #expect(allowed.status == .ok, "\(IngestHarness.json(allowed))")
                #expect(IngestHarness.json(allowed)["sandboxAmount"]?.int == 150 && IngestHarness.json(allowed)["balance"]?.int == 1450)
                let refusedFlag = try await Self.spend(client, amount: 150, key: "a2", allowSandbox: false)
                #expect(IngestHarness.errorCode(refusedFlag) == "insufficient_coins")

                let marked = try await Self.admin(client, .put, "/v1/admin/testers/bob", body: #"{"reason":"QA"}"#)
                #expect(marked.status == .ok, "\(IngestHarness.json(marked))")
                let tester = try await Self.spend(client, user: "bob", amount: 1550, key: "b1")
                #expect(tester.status == .ok, "\(IngestHarness.json(tester))")
                #expect(IngestHarness.json(tester)["sandboxAmount"]?.int == 1500 && IngestHarness.json(tester)["balance"]?.int == 50)

                let expired = try await Self.spend(client, user: "carol", amount: 150, key: "c1")
                #expect(IngestHarness.errorCode(expired) == "insufficient_coins", "\(IngestHarness.json(expired))")

                let bad = try await client.execute(
                    uri: "/v1/users/dave/coins/spend", method: .post,
                    headers: try IngestHarness.apiKeyHeaders(IngestHarness.key(only: .spend)),
                    body: ByteBuffer(string: #"{"amount":1,"reason":"sword","idempotencyKey":"d0","allowSandbox":"yes"}"#))
                #expect(bad.status == .badRequest && IngestHarness.errorCode(bad) == "invalid_request")
            }
            try await IngestHarness.withApp(server, configure: { $0.sandboxValue = .everyone }) { client in
                let everyone = try await Self.spend(client, user: "dave", amount: 1550, key: "d1")
                #expect(everyone.status == .ok, "\(IngestHarness.json(everyone))")
                #expect(IngestHarness.json(everyone)["sandboxAmount"]?.int == 1500)
            }
        }
    }

    /// A tester's read (and every read under `everyone`) merges the sandbox side at the top level, says so
    /// (`sandboxMerged`), and still carries the block.
    @Test func aTestersReadMergesTheSidesAndSaysSo() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            let future = String(Self.nowMilliseconds + 86_400_000)
            for user in ["alice", "bob"] {
                try await Self.account(redis, user, ["coins": "100"])
                try await Self.account(
                    redis, user, side: .sandbox, ["coins": "1500", "ent:vip:state": "active", "ent:vip:expires": future])
            }
            try await IngestHarness.withApp(server) { client in
                #expect(try await Self.admin(client, .put, "/v1/admin/testers/alice").status == .ok)
                let view = IngestHarness.json(try await Self.entitlements(client))
                #expect(view["coins"]?.int == 1600 && view["coinsSandbox"]?.int == 1500 && view["sandboxMerged"]?.bool == true, "\(view)")
                #expect(view["entitlements"]?[0]?["environment"]?.string == "sandbox", "\(view)")
                #expect(view["sandbox"]?["coins"]?.int == 1500, "\(view)")
                let other = IngestHarness.json(try await Self.entitlements(client, user: "bob"))
                #expect(other["coins"]?.int == 100 && other["sandboxMerged"]?.bool == false, "\(other)")
            }
            try await IngestHarness.withApp(server, configure: { $0.sandboxValue = .everyone }) { client in
                let view = IngestHarness.json(try await Self.entitlements(client, user: "bob"))
                #expect(view["coins"]?.int == 1600 && view["sandboxMerged"]?.bool == true, "\(view)")
            }
        }
    }

    /// For a tester (App Review's demo account) the sandbox side's history counts: the win-back offer is signed.
    @Test func aTestersSandboxHistoryCountsForOffers() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            let past = String(Self.nowMilliseconds - 86_400_000)
            try await Self.account(redis, "alice", side: .sandbox, ["ent:vip:state": "expired", "ent:vip:expires": past])
            try await OfferKeyFixture.withApp(server, catalog: try Self.catalog()) { client, _ in
                #expect(try await Self.admin(client, .put, "/v1/admin/testers/alice").status == .ok)
                let response = try await client.execute(
                    uri: "/v1/offers/promotional", method: .post, headers: try await IngestHarness.userHeaders("alice"),
                    body: ByteBuffer(string: #"{"productId":"\#(Self.month)","offerId":"winback"}"#))
                #expect(response.status == .ok, "\(IngestHarness.json(response))")
                #expect(IngestHarness.json(response)["signatureV2"]?.string != nil)
            }
        }
    }

    /// `PUT`, `GET` and `DELETE /v1/admin/testers…`: `admin` only, per project, optionally expiring, each change one
    /// event in the user's sequence (`tester.added`, `tester.removed`), the same mark again nothing.
    @Test func theAdminRouteMarksListsAndRemovesTestersWithEvents() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            _ = try await redis.send(RedisCommand("HSET", Self.keys.account(user: "alice"), "events.seq", "4"))
            try await IngestHarness.withApp(server) { client in
                let until = EntitlementsView.iso8601(Self.nowMilliseconds + 86_400_000)
                let body = #"{"until":"\#(until)","reason":"App Review demo account"}"#
                let forbidden = try await Self.admin(
                    client, .put, "/v1/admin/testers/alice", key: IngestHarness.key(only: .spend), body: body)
                #expect(forbidden.status == .forbidden)

                let added = try await Self.admin(client, .put, "/v1/admin/testers/alice", body: body)
                #expect(added.status == .ok, "\(IngestHarness.json(added))")
                let answer = IngestHarness.json(added)
                #expect(answer["changed"]?.bool == true && answer["seq"]?.int == 5 && answer["active"]?.bool == true)
                #expect(answer["until"]?.string == until && answer["by"]?.string == "admin-only")
                let again = try await Self.admin(client, .put, "/v1/admin/testers/alice", body: body)
                #expect(IngestHarness.json(again)["changed"]?.bool == false)

                let log = try await redis.xrange(Self.keys.userEvents(user: "alice"))
                #expect(log.map(\.id) == ["5-0"])
                let event = try #require(JSONValue.read(log.first?.fields["event"] ?? []))
                #expect(event["type"]?.string == "tester.added" && event["userId"]?.string == "alice" && event["seq"]?.int == 5)
                #expect(event["until"]?.string == until && event["reason"]?.string == "App Review demo account")
                #expect(event["by"]?.string == "admin-only" && event["source"]?.string == "tester")
                let stream = try await redis.xrange(Self.keys.events().stream)
                #expect(stream.last?.string("event.type") == "tester.added" && stream.last?.string("kind") == "tester")

                let list = IngestHarness.json(try await Self.admin(client, .get, "/v1/admin/testers"))
                #expect(list["sandboxValue"]?.string == "testers")
                #expect(list["testers"]?.array?.compactMap { $0["userId"]?.string } == ["alice"], "\(list)")

                for (text, code) in [("2020-01-01T00:00:00Z", "invalid_until"), ("soon", "invalid_until")] {
                    let refused = try await Self.admin(client, .put, "/v1/admin/testers/bob", body: #"{"until":"\#(text)"}"#)
                    #expect(refused.status == .badRequest && IngestHarness.errorCode(refused) == code, "\(text)")
                }
                let unknown = try await Self.admin(client, .put, "/v1/admin/testers/bob", body: #"{"untill":"x"}"#)
                #expect(IngestHarness.errorCode(unknown) == "invalid_request")

                let removed = try await Self.admin(client, .delete, "/v1/admin/testers/alice")
                #expect(removed.status == .ok && IngestHarness.json(removed)["seq"]?.int == 6, "\(IngestHarness.json(removed))")
                let last = try #require(
                    JSONValue.read(try await redis.xrange(Self.keys.userEvents(user: "alice")).last?.fields["event"] ?? []))
                #expect(last["type"]?.string == "tester.removed" && last["by"]?.string == "admin-only")
                #expect(try await Self.admin(client, .delete, "/v1/admin/testers/alice").status == .notFound)
                #expect(IngestHarness.json(try await Self.admin(client, .get, "/v1/admin/testers"))["testers"]?.array?.isEmpty == true)
            }
        }
    }

    /// A project's testers are its own: the games key marks games' alice; the default project's alice is no tester, and
    /// neither project lists the other's.
    @Test func testersArePerProject() async throws {
        try await ProjectServiceKeyTests.withProjects { redis, client in
            let arcade = ProjectServiceKeyTests.arcadeKey
            #expect(try await Self.admin(client, .put, "/v1/admin/testers/alice", key: arcade).status == .ok)
            let games = Self.keys.inProject(ProjectServiceKeyTests.games)
            #expect(try await redis.hgetall(games.tester(user: "alice"))["by"] == "arcade")
            #expect(try await redis.send("EXISTS", Self.keys.tester(user: "alice")).int == 0)
            let event = try #require(JSONValue.read(try await redis.xrange(games.userEvents(user: "alice")).last?.fields["event"] ?? []))
            #expect(event["type"]?.string == "tester.added" && event["project"]?.string == "games")
            let listed = IngestHarness.json(try await Self.admin(client, .get, "/v1/admin/testers", key: arcade))
            #expect(listed["testers"]?.array?.count == 1)
            #expect(try await Testers.list(keys: Self.keys, on: redis).isEmpty)
            #expect(try await Testers.list(keys: games, on: redis).map(\.user) == ["alice"])
        }
    }
}
