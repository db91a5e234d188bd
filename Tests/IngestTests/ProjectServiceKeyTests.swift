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

/// Service keys bound to a project (docs/PROJECTS.md): user "alice" exists in the default project (100 coins) and in
/// `games` (7 coins); a key of one project reads, spends, grants and records consent on its own project's alice only.
@Suite struct ProjectServiceKeyTests {
    static let games = ProjectID("games")!
    static let keys = Keys(prefix: "tg")
    static let shopKey = "shop-key-0123456789abcdefghijklmnopqrstuv"
    static let arcadeKey = "arcade-key-0123456789abcdefghijklmnopqrstu"

    /// Two projects, and a key of each with every scope but `admin`, and `admin` on the games key.
    static func configure(_ configuration: inout IngestConfiguration) throws {
        let catalog = try Catalog(products: [
            Product(productId: "com.example.game.gems", type: .consumable, coins: 10),
            Product(productId: "com.example.game.pass", type: .autoRenewable, entitlement: "pass"),
        ])
        configuration.projects = [
            .init(id: games, catalog: catalog, clientJWTSecret: "games-client-secret-0123456789abcdefghij")
        ]
        configuration.serviceKeys = [
            try ServiceKey(entry: "shop:read+lookup+spend+grant+consent:\(shopKey)"),
            try ServiceKey(entry: "arcade@games:read+lookup+spend+grant+consent+admin:\(arcadeKey)"),
        ]
    }

    static func seed(_ redis: RedisConnection) async throws {
        _ = try await redis.send(RedisCommand("HSET", keys.account(user: "alice"), "coins", "100"))
        _ = try await redis.send(RedisCommand("HSET", keys.inProject(games).account(user: "alice"), "coins", "7"))
        _ = try await redis.send(RedisCommand("HSET", keys.account(user: "bob"), "coins", "5"))
    }

    static func call(
        _ client: any TestClientProtocol, _ method: HTTPRequest.Method, _ uri: String, key: String, body: String? = nil
    ) async throws -> TestResponse {
        try await client.execute(
            uri: uri, method: method, headers: try IngestHarness.apiKeyHeaders(key), body: body.map { ByteBuffer(string: $0) })
    }

    static func withProjects(_ body: @escaping @Sendable (RedisConnection, any TestClientProtocol) async throws -> Void) async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await seed(redis)
            try await IngestHarness.withApp(server, configure: configure) { client in try await body(redis, client) }
        }
    }

    /// The customer API answers the key's project's alice; a user only the other project holds is `404`.
    @Test func customerReadsAnswerTheKeysProjectOnly() async throws {
        try await Self.withProjects { _, client in
            let arcade = try await Self.call(client, .get, "/v1/users/alice", key: Self.arcadeKey)
            #expect(arcade.status == .ok)
            #expect(IngestHarness.json(arcade)["coins"]?.int == 7)
            let shop = try await Self.call(client, .get, "/v1/users/alice", key: Self.shopKey)
            #expect(IngestHarness.json(shop)["coins"]?.int == 100)
            let bob = try await Self.call(client, .get, "/v1/users/bob", key: Self.arcadeKey)
            #expect(bob.status == .notFound)
        }
    }

    /// A games key spends games alice's 7 coins, never the default project's 100: 50 is refused with games' balance;
    /// the event names the project on the stream and in its JSON, and only that project's keys see it.
    @Test func aSpendTakesTheKeysProjectsCoinsAndItsEventNamesTheProject() async throws {
        try await Self.withProjects { redis, client in
            let refused = try await Self.call(
                client, .post, "/v1/users/alice/coins/spend", key: Self.arcadeKey,
                body: #"{"amount":50,"reason":"sword","idempotencyKey":"k1"}"#)
            #expect(refused.status == .conflict)
            #expect(IngestHarness.errorCode(refused) == "insufficient_coins")
            let spent = try await Self.call(
                client, .post, "/v1/users/alice/coins/spend", key: Self.arcadeKey,
                body: #"{"amount":5,"reason":"sword","idempotencyKey":"k2"}"#)
            #expect(spent.status == .ok)
            #expect(IngestHarness.json(spent)["balance"]?.int == 2)
            #expect(try await redis.hgetall(Self.keys.account(user: "alice"))["coins"] == "100")
            #expect(try await redis.hgetall(Self.keys.inProject(Self.games).account(user: "alice"))["coins"] == "2")

            let stream = try await redis.xrange(Self.keys.events().stream)
            #expect(stream.count == 1 && stream.first?.string("project") == "games")
            let event = try #require(JSONValue.read(stream.first?.fields["event"] ?? []))
            #expect(event["project"]?.string == "games" && event["type"]?.string == "coins.spent")

            let shopEvents = try await Self.call(client, .get, "/v1/users/alice/events", key: Self.shopKey)
            #expect(IngestHarness.json(shopEvents)["events"]?.array?.count == 0)
            let arcadeEvents = try await Self.call(client, .get, "/v1/users/alice/events", key: Self.arcadeKey)
            #expect(IngestHarness.json(arcadeEvents)["events"]?.array?.count == 1)

            let shopFeed = try await Self.call(client, .get, "/v1/events", key: Self.shopKey)
            #expect(IngestHarness.json(shopFeed)["events"]?.array?.count == 0)
            let arcadeFeed = try await Self.call(client, .get, "/v1/events", key: Self.arcadeKey)
            let feed = IngestHarness.json(arcadeFeed)["events"]?.array ?? []
            #expect(feed.count == 1 && feed.first?["project"]?.string == "games")
        }
    }

    /// Grants and consent land in the key's project: the games catalog decides the entitlement (the default catalog's
    /// `vip` is unknown there), and nothing is written under the default project's alice.
    @Test func grantsAndConsentLandInTheKeysProject() async throws {
        try await Self.withProjects { redis, client in
            let until = ISO8601DateFormatter().string(from: Date().addingTimeInterval(86_400))
            let vip = try await Self.call(
                client, .post, "/v1/users/alice/grants", key: Self.arcadeKey,
                body: #"{"entitlement":"vip","until":"\#(until)","reason":"ticket"}"#)
            #expect(vip.status == .unprocessableContent)
            let pass = try await Self.call(
                client, .post, "/v1/users/alice/grants", key: Self.arcadeKey,
                body: #"{"entitlement":"pass","until":"\#(until)","reason":"ticket"}"#)
            #expect(pass.status == .created)
            let grantId = try #require(IngestHarness.json(pass)["grantId"]?.string)
            #expect(try await redis.hgetall(Self.keys.grants(user: "alice")).isEmpty)
            #expect(try await redis.hgetall(Self.keys.inProject(Self.games).grants(user: "alice"))[grantId] != nil)
            let stream = try await redis.xrange(Self.keys.events().stream)
            #expect(stream.count == 1 && stream.first?.string("project") == "games")
            // The default project's key cannot revoke games' grant: its alice has none.
            let revoke = try await Self.call(client, .delete, "/v1/users/alice/grants/\(grantId)", key: Self.shopKey)
            #expect(revoke.status == .notFound)

            let consent = try await Self.call(
                client, .put, "/v1/users/alice/consent", key: Self.arcadeKey, body: #"{"consented":true}"#)
            #expect(consent.status == .ok)
            #expect(try await redis.hgetall(Self.keys.consent(user: "alice")).isEmpty)
            #expect(try await redis.hgetall(Self.keys.inProject(Self.games).consent(user: "alice"))["consented"] == "1")
        }
    }

    /// Operators' calls serve the key's project (docs/PROJECTS.md): the games key's job carries `games` in its entry,
    /// its payload and its status, so games' keys read it and the default project's key is refused as for another
    /// project's job; the default key's look-up is the default project's job.
    @Test func operatorsCallsCarryTheKeysProject() async throws {
        try await Self.withProjects { redis, client in
            let extend = try await Self.call(
                client, .post, "/v1/admin/apple/extend", key: Self.arcadeKey,
                body: #"{"originalTransactionId":"1000","days":3}"#)
            #expect(extend.status == .accepted)
            let jobId = try #require(IngestHarness.json(extend)["jobId"]?.string)
            let status = try #require(try await Self.keys.readJobStatus(jobId, on: redis))
            #expect(status.project == "games" && status.kind == .operatorCall)
            let partition = try #require(Self.keys.partition(ofJob: jobId))
            let entries = try await redis.xrange(Self.keys.jobs(partition: partition).stream)
            let job = try #require(try entries.map { try Job(entry: $0) }.first { $0.id == jobId })
            #expect(job.project == Self.games)
            #expect(try OperatorCall(json: job.payload).project == Self.games)
            #expect(try await Self.call(client, .get, "/v1/jobs/\(jobId)", key: Self.arcadeKey).status == .ok)
            #expect(try await Self.call(client, .get, "/v1/jobs/\(jobId)", key: Self.shopKey).status == .forbidden)

            let lookup = try await Self.call(client, .get, "/v1/lookup?orderId=MK5TTTVWJH", key: Self.shopKey)
            #expect(lookup.status == .accepted)
            let lookupId = try #require(IngestHarness.json(lookup)["jobId"]?.string)
            #expect(try await Self.keys.readJobStatus(lookupId, on: redis)?.project == nil)
            #expect(try await Self.call(client, .get, "/v1/jobs/\(lookupId)", key: Self.arcadeKey).status == .forbidden)
            #expect(try await Self.call(client, .get, "/v1/jobs/\(lookupId)", key: Self.shopKey).status == .ok)
        }
    }

    /// An operator call's payload names its project outside `default`; a payload without one (queued before projects)
    /// reads as the default project's.
    @Test func anOperatorCallsPayloadCarriesItsProject() throws {
        let call = OperatorCall(.lookupOrder(orderId: "MK5TTTVWJH"), by: "arcade", project: Self.games)
        #expect(try OperatorCall(json: call.payload) == call)
        let old = OperatorCall(.lookupOrder(orderId: "MK5TTTVWJH"), by: "shop")
        #expect(!String(decoding: old.payload, as: UTF8.self).contains("project"))
        #expect(try OperatorCall(json: Array(#"{"op":"lookup_order","orderId":"MK5TTTVWJH","by":"shop"}"#.utf8)).project == .default)
        #expect(throws: JSONError.self) {
            try OperatorCall(json: Array(#"{"op":"lookup_order","orderId":"MK5TTTVWJH","by":"shop","project":"Games"}"#.utf8))
        }
    }

    /// `name@project:scopes:key` binds the key; a malformed id and a project the deployment does not serve are refused.
    @Test func keysNameTheirProject() throws {
        let bound = try ServiceKey(entry: "arcade@games:read:\(Self.arcadeKey)")
        #expect(bound.name == "arcade" && bound.project == Self.games && bound.scopes == [.read] && !bound.isBare)
        #expect(try ServiceKey(entry: "shop:read:\(Self.shopKey)").project == .default)
        #expect(throws: ServiceKeyError.invalidProject(name: "arcade", "Games")) {
            try ServiceKey(entry: "arcade@Games:read:\(Self.arcadeKey)")
        }
        #expect(throws: ServiceKeyError.unknownProject(name: "arcade", "games")) {
            try ServiceKey.list(["arcade@games:read:\(Self.arcadeKey)"], projects: [.default])
        }
    }
}
