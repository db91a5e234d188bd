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

@Suite struct ReadEndpointTests {
    @Test func usersReadOnlyTheirOwnJobsAndServicesReadAny() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                let alice = try await IngestHarness.userHeaders("alice")
                let submitted = try await client.execute(
                    uri: "/v1/receipts", method: .post, headers: alice,
                    body: ByteBuffer(string: #"{"receipt":"AAAA"}"#))
                let jobID = try #require(IngestHarness.json(submitted)["jobId"]?.string)
                let own = try await client.execute(uri: "/v1/jobs/\(jobID)", method: .get, headers: alice)
                #expect(own.status == .ok)
                #expect(IngestHarness.json(own)["status"]?.string == "queued")
                #expect(IngestHarness.json(own)["jobId"]?.string == jobID)
                let other = try await client.execute(
                    uri: "/v1/jobs/\(jobID)", method: .get,
                    headers: try await IngestHarness.userHeaders("bob"))
                #expect(other.status == .forbidden)
                #expect(IngestHarness.errorCode(other) == "forbidden")
                let service = try await client.execute(
                    uri: "/v1/jobs/\(jobID)", method: .get,
                    headers: try IngestHarness.apiKeyHeaders())
                #expect(service.status == .ok)
                let anonymous = try await client.execute(uri: "/v1/jobs/\(jobID)", method: .get)
                #expect(anonymous.status == .unauthorized)
                let missing = try await client.execute(uri: "/v1/jobs/\(String(repeating: "0", count: 32))", method: .get, headers: alice)
                #expect(missing.status == .notFound)
                #expect(IngestHarness.errorCode(missing) == "not_found")
            }
        }
    }

    @Test func entitlementsShowWhatTheFulfillerWrote() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            let keys = Keys(prefix: "tg")
            _ = try await redis.send(
                "HSET", keys.account(user: "alice"), EntitlementsView.Field.coins, "250",
                EntitlementsView.Field.state("vip"), "active",
                EntitlementsView.Field.expires("vip"), "1800000000000",
                EntitlementsView.Field.autoRenew("vip"), "1",
                EntitlementsView.Field.state("no_ads"), "active")
            try await IngestHarness.withApp(server) { client in
                let own = try await client.execute(
                    uri: "/v1/users/alice/entitlements", method: .get,
                    headers: try await IngestHarness.userHeaders("alice"))
                #expect(own.status == .ok)
                let json = IngestHarness.json(own)
                #expect(json["coins"]?.int == 250)
                let list = try #require(json["entitlements"]?.array)
                #expect(list.map { $0["entitlement"]?.string } == ["no_ads", "vip"])
                #expect(list[1]["state"]?.string == "active")
                #expect(list[1]["autoRenew"]?.bool == true)
                #expect(list[1]["expiresAt"]?.string == "2027-01-15T08:00:00.000Z")
                #expect(list[0]["expiresAt"] == .null)
                let other = try await client.execute(
                    uri: "/v1/users/alice/entitlements", method: .get,
                    headers: try await IngestHarness.userHeaders("bob"))
                #expect(other.status == .forbidden)
                let service = try await client.execute(
                    uri: "/v1/users/nobody/entitlements", method: .get,
                    headers: IngestHarness.bearer(IngestHarness.serviceKey))
                #expect(service.status == .ok)
                #expect(IngestHarness.json(service)["coins"]?.int == 0)
            }
        }
    }

    @Test func productsServeTheCatalog() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                let response = try await client.execute(uri: "/v1/products", method: .get)
                #expect(response.status == .ok)
                let products = try #require(IngestHarness.json(response)["products"]?.array)
                #expect(products.compactMap { $0["productId"]?.string } == ["com.example.coins100", "com.example.vip.month"])
            }
        }
    }

    /// Issue 42, item 12: another project's catalog is for that project's callers (a user token it signed, a key bound
    /// to it); anyone else gets the same `404` for every other value, so the answer never tells which projects exist.
    @Test func anotherProjectsCatalogIsForItsOwnCallersAndHiddenFromOthers() async throws {
        let gamesSecret = "test-games-secret-0123456789abcdefghijklmn"
        let gamesKey = "test-games-read-key-0123456789abcdefghijkl"
        try await withRedisServer { server in
            try await IngestHarness.withApp(
                server,
                configure: { configuration in
                    let games = try #require(ProjectID("games"))
                    let catalog = try Catalog(products: [Product(productId: "com.example.gems", type: .consumable, coins: 5)])
                    configuration.projects = [.init(id: games, catalog: catalog, clientJWTSecret: gamesSecret)]
                    configuration.serviceKeys.append(try ServiceKey(entry: "games-reader@games:read:\(gamesKey)"))
                }
            ) { client in
                func get(_ project: String, _ headers: HTTPFields = [:]) async throws -> TestResponse {
                    try await client.execute(uri: "/v1/products?project=\(project)", method: .get, headers: headers)
                }
                let gamer = IngestHarness.bearer(try await IngestHarness.token(user: "alice", secret: gamesSecret))
                for headers in [gamer, try IngestHarness.apiKeyHeaders(gamesKey)] {
                    let own = try await get("games", headers)
                    #expect(own.status == .ok)
                    #expect(IngestHarness.json(own)["products"]?.array?.compactMap { $0["productId"]?.string } == ["com.example.gems"])
                }
                // Anonymous, the default project's user and key, a bad token: one answer for a project that exists and
                // for ones that do not.
                let outsiders: [HTTPFields] = [
                    [:], try await IngestHarness.userHeaders("alice"), try IngestHarness.apiKeyHeaders(),
                    IngestHarness.bearer("not-a-token"),
                ]
                var answers: Set<[UInt8]> = []
                for headers in outsiders {
                    for project in ["games", "nope", "Games!", "x%00"] {
                        let response = try await get(project, headers)
                        #expect(response.status == .notFound, "\(project) \(headers)")
                        answers.insert(Array(response.body.readableBytesView))
                    }
                }
                #expect(answers.count == 1)
                // The default project's catalog stays open to anyone.
                #expect(try await get("default").status == .ok)
            }
        }
    }

    @Test func ordersAreStoredUnderTheLedgerKeys() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                let alice = try await IngestHarness.userHeaders("alice")
                let response = try await client.execute(
                    uri: "/v1/orders", method: .post, headers: alice,
                    body: ByteBuffer(string: #"{"productId":"com.example.coins100"}"#))
                #expect(response.status == .created)
                let orderNo = try #require(IngestHarness.json(response)["orderNo"]?.string)
                let token = try #require(IngestHarness.json(response)["appAccountToken"]?.string)
                #expect(UUID(uuidString: token) != nil)
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let keys = Keys(prefix: "tg")
                let fields = try await redis.send("HGETALL", keys.order(user: "alice", orderNo: orderNo))
                var hash: [String: String] = [:]
                let items = fields.array ?? []
                for index in stride(from: 0, to: items.count - 1, by: 2) { hash[items[index].string ?? ""] = items[index + 1].string }
                let order = try #require(Order(hash: hash))
                #expect(order.userID == "alice")
                #expect(order.productId == "com.example.coins100")
                #expect(order.state == .pending)
                #expect(order.appAccountToken == token)
                #expect(try await redis.send("HGET", keys.appAccountToken(token.uppercased()), Order.TokenField.orderNo).string == orderNo)
                #expect(try await redis.send("HGET", keys.appAccountToken(token), Order.TokenField.user).string == "alice")
                #expect(try await redis.send("ZSCORE", keys.orders(user: "alice"), orderNo).int == order.createdAtMilliseconds)

                let before = try await IngestHarness.dbsize(redis)
                let unknown = try await client.execute(
                    uri: "/v1/orders", method: .post, headers: alice,
                    body: ByteBuffer(string: #"{"productId":"com.example.nope"}"#))
                #expect(unknown.status == .unprocessableContent)
                #expect(IngestHarness.errorCode(unknown) == "unknown_product")
                let anonymous = try await client.execute(
                    uri: "/v1/orders", method: .post,
                    body: ByteBuffer(string: #"{"productId":"com.example.coins100"}"#))
                #expect(anonymous.status == .unauthorized)
                #expect(try await IngestHarness.dbsize(redis) == before)
            }
        }
    }

    @Test func withoutACatalogEveryOrderIsAnUnknownProduct() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server, configure: { $0.catalog = try Catalog(products: []) }) { client in
                let response = try await client.execute(
                    uri: "/v1/orders", method: .post, headers: try await IngestHarness.userHeaders("alice"),
                    body: ByteBuffer(string: #"{"productId":"com.example.coins100"}"#))
                #expect(IngestHarness.errorCode(response) == "unknown_product")
                let products = try await client.execute(uri: "/v1/products", method: .get)
                #expect((IngestHarness.json(products)["products"]?.array)?.isEmpty == true)
            }
        }
    }
}
