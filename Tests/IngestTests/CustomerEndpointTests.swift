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

/// Issue 31 items 2 and 3: the customer API's reads, against a ledger the real ledger functions wrote.
@Suite struct CustomerEndpointTests {
    /// Alice: a 100-coin pack bought for an order (price, currency, storefront as Apple stated them), a second pack
    /// refunded after she spent its coins (a shortfall), and a VIP subscription whose renewal Apple says is off, with
    /// win-back offers. Bob: one pack.
    static func ledger(_ server: RedisServer) async throws -> Order {
        try await LedgerHarness.on(server, partitions: 1, clamp: true) { h in
            let order = try await Fixture.order(h, user: "alice", product: "coins100")
            _ = try await h.redis.send(RedisCommand("ZADD", h.keys.orders(user: "alice"), order.createdAtMilliseconds, order.orderNo))
            var pack = Fixture.transaction("c1", product: "coins100", token: order.appAccountToken)
            (pack.price, pack.currency, pack.storefront) = (990, "EUR", "FRA")
            _ = try await h.deliver(Fixture.client("alice", [pack], order: order.orderNo))
            _ = try await h.deliver(Fixture.client("alice", [Fixture.transaction("c2", product: "coins100")]))
            _ = try await h.redis.send(RedisCommand("HINCRBY", h.keys.account(user: "alice"), "coins", "-150"))
            _ = try await h.deliver(
                Fixture.notification("REFUND", [Fixture.transaction("c2", product: "coins100", revoked: testNow - 1000)]))
            let sub = Fixture.transaction("s1", product: "vip.month", purchase: testNow - day, expires: testNow + 29 * day)
            _ = try await h.deliver(Fixture.client("alice", [sub]))
            let renewal = PurchaseEventRenewal(
                originalTransactionId: "s1", productId: "vip.month", autoRenewStatus: 0, autoRenewProductId: "vip.month",
                expirationIntent: 1, isInBillingRetryPeriod: false, signedDate: testNow,
                eligibleWinBackOfferIds: ["winback.1", "winback.2", "bad id,with comma"])
            _ = try await h.deliver(
                Fixture.notification("DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", [sub], renewals: [renewal]))
            _ = try await h.deliver(Fixture.client("bob", [Fixture.transaction("b1", product: "coins100")]))
            return order
        }
    }

    @Test func customerInfoShowsWhatTheLedgerHolds() async throws {
        try await withRedisServer { server in
            let order = try await Self.ledger(server)
            try await IngestHarness.withApp(server) { client in
                let response = try await client.execute(
                    uri: "/v1/users/alice", method: .get, headers: try IngestHarness.apiKeyHeaders(IngestHarness.key(only: .read)))
                #expect(response.status == .ok)
                let info = IngestHarness.json(response)
                #expect(info["userId"]?.string == "alice")
                #expect(info["coins"]?.int == 0, "200 credited, 150 spent, the refund took back the 50 left")
                #expect(info["shortfall"]?.int == 50)
                #expect((info["lastEventSeq"]?.int ?? 0) >= 4)
                let transactions = info["transactions"]?.array ?? []
                #expect(Set(transactions.compactMap { $0["transactionId"]?.string }) == ["c1", "c2", "s1"])
                #expect(info["transactionsTotal"]?.int == 3)
                let c1 = try #require(transactions.first { $0["transactionId"]?.string == "c1" })
                #expect(c1["price"]?.int == 990 && c1["currency"]?.string == "EUR" && c1["storefront"]?.string == "FRA")
                #expect(c1["productId"]?.string == "coins100" && c1["ownershipType"]?.string == "PURCHASED")
                #expect(c1["environment"]?.string == "sandbox" && c1["quantity"]?.int == 1 && c1["refund"] == nil)
                let c2 = try #require(transactions.first { $0["transactionId"]?.string == "c2" })
                #expect(c2["state"]?.string == "refunded")
                #expect(c2["refund"]?["debited"]?.int == 50 && c2["refund"]?["shortfall"]?.int == 50)
                let subscription = try #require(info["subscriptions"]?.array?.first)
                #expect(subscription["entitlement"]?.string == "vip" && subscription["autoRenewStatus"]?.int == 0)
                #expect(subscription["autoRenewProductId"]?.string == "vip.month" && subscription["expirationIntent"]?.int == 1)
                #expect(subscription["eligibleWinBackOfferIds"]?.array?.compactMap(\.string) == ["winback.1", "winback.2"])
                #expect(subscription["inBillingRetry"]?.bool == false)
                let entitlement = try #require(info["entitlements"]?.array?.first)
                #expect(entitlement["entitlement"]?.string == "vip" && entitlement["source"]?.string == "apple")
                let orders = info["orders"]?.array ?? []
                #expect(orders.count == 1 && orders.first?["orderNo"]?.string == order.orderNo)
                #expect(orders.first?["state"]?.string == "paid" && orders.first?["transactionId"]?.string == "c1")

                let nobody = try await client.execute(uri: "/v1/users/carol", method: .get, headers: try IngestHarness.apiKeyHeaders())
                #expect(nobody.status == .notFound && IngestHarness.errorCode(nobody) == "not_found")
            }
        }
    }

    @Test func aTransactionIsFoundWithItsOwner() async throws {
        try await withRedisServer { server in
            _ = try await Self.ledger(server)
            try await IngestHarness.withApp(server) { client in
                let headers = try IngestHarness.apiKeyHeaders(IngestHarness.key(only: .read))
                let c1 = IngestHarness.json(try await client.execute(uri: "/v1/transactions/c1", method: .get, headers: headers))
                #expect(c1["userId"]?.string == "alice" && c1["transaction"]?["transactionId"]?.string == "c1")
                #expect(c1["transaction"]?["price"]?.int == 990)
                let b1 = IngestHarness.json(try await client.execute(uri: "/v1/transactions/b1", method: .get, headers: headers))
                #expect(b1["userId"]?.string == "bob")
                for unknown in ["nope", "a%20b", String(repeating: "9", count: 65)] {
                    let response = try await client.execute(uri: "/v1/transactions/\(unknown)", method: .get, headers: headers)
                    #expect(response.status == .notFound, "\(unknown)")
                }
            }
        }
    }

    @Test func lookUpsAnswerTheOwnerAndTheTransactions() async throws {
        try await withRedisServer { server in
            let order = try await Self.ledger(server)
            try await IngestHarness.withApp(server) { client in
                let headers = try IngestHarness.apiKeyHeaders(IngestHarness.key(only: .read))
                func get(_ query: String) async throws -> TestResponse {
                    try await client.execute(uri: "/v1/lookup?\(query)", method: .get, headers: headers)
                }
                let chain = IngestHarness.json(try await get("originalTransactionId=s1"))
                #expect(chain["userId"]?.string == "alice")
                #expect(chain["transactions"]?.array?.compactMap { $0["transactionId"]?.string } == ["s1"])
                let token = IngestHarness.json(try await get("appAccountToken=\(order.appAccountToken.uppercased())"))
                #expect(token["userId"]?.string == "alice" && token["orderNo"]?.string == order.orderNo)
                #expect(token["transactions"]?.array?.compactMap { $0["transactionId"]?.string } == ["c1"])

                #expect(try await get("originalTransactionId=unknown").status == .notFound)
                #expect(try await get("appAccountToken=\(UUID().uuidString)").status == .notFound)
                // An Apple order ID is asked of Apple by the verifier, which `read` alone may not (issue 42 item 3):
                // with `lookup`, a job of kind operator, carrying the key's name.
                let refused = try await get("orderId=MK5TTTVWJH")
                #expect(refused.status == .forbidden && IngestHarness.errorCode(refused) == "missing_scope")
                let orderLookup = try await client.execute(
                    uri: "/v1/lookup?orderId=MK5TTTVWJH", method: .get,
                    headers: try IngestHarness.apiKeyHeaders(IngestHarness.key(only: .lookup)))
                #expect(orderLookup.status == .accepted)
                let jobID = try #require(IngestHarness.json(orderLookup)["jobId"]?.string)
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let keys = Keys(prefix: "tg")
                let partition = try #require(keys.partition(ofJob: jobID))
                let job = try await redis.hgetall(keys.job(jobID, partition: partition))
                #expect(job["kind"] == "operator")
                let queued = try await redis.xrange(keys.jobs(partition: partition).stream)
                #expect(queued.count == 1, "the read key's refused look-up queued a job")
                let payload = try #require(queued.last?.string("job.payload"))
                #expect(payload.contains(#""op":"lookup_order""#) && payload.contains(#""by":"lookup-only""#), "\(payload)")
                for bad in [
                    "", "originalTransactionId=s1&appAccountToken=\(order.appAccountToken)", "appAccountToken=not-a-uuid",
                    "orderId=MK5&originalTransactionId=s1",
                ] {
                    let response = try await get(bad)
                    #expect(response.status == .badRequest && IngestHarness.errorCode(response) == "invalid_request", "\(bad)")
                }
                // A malformed order ID, with the scope that may ask Apple: refused before any job.
                let malformed = try await client.execute(
                    uri: "/v1/lookup?orderId=a/b", method: .get,
                    headers: try IngestHarness.apiKeyHeaders(IngestHarness.key(only: .lookup)))
                #expect(malformed.status == .badRequest && IngestHarness.errorCode(malformed) == "invalid_request")
                #expect(try await redis.xrange(keys.jobs(partition: partition).stream).count == 1)
            }
        }
    }
}
