import Core
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Ledger
import Pipeline
import Redis
import Synchronization
import TestSupport
import Testing

@testable import ingest

/// `POST /v1/offers/promotional` signs an offer only under its catalog rule: eligibility by the ledger's state of the
/// product's subscription group, a per-user limit within a window, and a bounded record of every signature.
@Suite struct PromotionalOfferRulesTests {
    let month = "com.example.vip.month"

    /// `vip.month` and `vipplus.month` share the subscription group `premium`; `news.month` is a group of its own.
    func catalog() throws -> Catalog {
        try Catalog(products: [
            Product(
                productId: month, type: .autoRenewable, entitlement: "vip",
                offers: [
                    "loyal3m", PromotionalOffer(id: "winback", eligibility: .lapsed),
                    PromotionalOffer(id: "upsell", eligibility: .active),
                    PromotionalOffer(id: "twice", perUser: 2, window: .seconds(86_400)),
                ],
                subscriptionGroup: "premium"),
            Product(productId: "com.example.vipplus.month", type: .autoRenewable, entitlement: "vip_plus", subscriptionGroup: "premium"),
            Product(productId: "com.example.news.month", type: .autoRenewable, entitlement: "news", offers: ["news1"]),
        ])
    }

    func post(_ client: any TestClientProtocol, _ offer: String, user: String, orderNo: String? = nil) async throws -> TestResponse {
        let order = orderNo.map { #","orderNo":"\#($0)""# } ?? ""
        return try await client.execute(
            uri: "/v1/offers/promotional", method: .post, headers: try await IngestHarness.userHeaders(user),
            body: ByteBuffer(string: #"{"productId":"\#(month)","offerId":"\#(offer)"\#(order)}"#))
    }

    /// Writes account fields as the fulfiller does.
    func account(_ redis: RedisConnection, _ user: String, _ fields: [String: String]) async throws {
        var arguments: [any RedisArgumentConvertible] = [Keys(prefix: "tg").account(user: user)]
        for (name, value) in fields { arguments += [name, value] }
        _ = try await redis.send(RedisCommand("HSET", arguments: arguments))
    }

    @Test func eligibilityFollowsTheLedgerStateOfTheSubscriptionGroup() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let future = String(now + 86_400_000)
            let past = String(now - 86_400_000)
            try await account(redis, "lapsed", ["ent:vip:state": "expired", "ent:vip:expires": past])
            try await account(redis, "retrying", ["ent:vip:state": "billingRetry", "ent:vip:expires": past])
            // An `active` state whose period ended without word from Apple counts as expired.
            try await account(redis, "stale", ["ent:vip:state": "active", "ent:vip:expires": past])
            // The group is `premium`: an active vip_plus makes the user an active subscriber of vip.month's group.
            try await account(redis, "plus", ["ent:vip_plus:state": "active", "ent:vip_plus:expires": future])
            try await account(redis, "grace", ["ent:vip:state": "gracePeriod", "ent:vip:expires": future])
            try await account(redis, "refunded", ["ent:vip:state": "revoked"])
            try await account(redis, "newsreader", ["ent:news:state": "active", "ent:news:expires": future])
            try await OfferKeyFixture.withApp(server, catalog: try catalog()) { client, _ in
                let cases: [(user: String, offer: String, allowed: Bool)] = [
                    ("never", "winback", false), ("never", "upsell", false), ("never", "loyal3m", true),
                    ("lapsed", "winback", true), ("lapsed", "upsell", false),
                    ("retrying", "winback", true), ("stale", "winback", true), ("stale", "upsell", false),
                    ("plus", "upsell", true), ("plus", "winback", false),
                    ("grace", "upsell", true), ("grace", "winback", false),
                    ("refunded", "winback", false), ("refunded", "upsell", false),
                    ("newsreader", "upsell", false), ("newsreader", "winback", false),
                ]
                for (user, offer, allowed) in cases {
                    let response = try await post(client, offer, user: user)
                    if allowed {
                        #expect(response.status == .ok, "\(user) \(offer)")
                        #expect(IngestHarness.json(response)["signatureV2"]?.string != nil, "\(user) \(offer)")
                    } else {
                        #expect(response.status == .forbidden, "\(user) \(offer)")
                        #expect(IngestHarness.errorCode(response) == "offer_not_eligible", "\(user) \(offer)")
                        #expect(IngestHarness.json(response)["signatureV2"] == nil)
                        #expect(IngestHarness.json(response)["signature"] == nil)
                    }
                }
            }
            // A refused request made no order and recorded no signature.
            for user in ["never", "refunded", "newsreader"] {
                #expect(try await redis.send("EXISTS", Keys(prefix: "tg").orders(user: user)).int == (user == "never" ? 1 : 0))
                #expect(try await redis.send("EXISTS", Keys(prefix: "tg").offerSignatures(user: user, offerId: "winback")).int == 0)
                #expect(try await redis.send("EXISTS", Keys(prefix: "tg").offerSignatures(user: user, offerId: "upsell")).int == 0)
            }
        }
    }

    @Test func thePerUserLimitHoldsWithinTheWindowAndEverySignatureIsRecorded() async throws {
        let start: Int64 = 1_767_225_600_000
        let time = ManualTime(start)
        let clock = PipelineClock(nowMilliseconds: { time.now.withLock { $0 } }, unitRandom: { 0.5 })
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            let keys = Keys(prefix: "tg")
            try await OfferKeyFixture.withApp(server, catalog: try catalog(), clock: clock) { client, _ in
                let first = try await post(client, "twice", user: "alice")
                #expect(first.status == .ok)
                let firstOrder = try #require(IngestHarness.json(first)["orderNo"]?.string)
                time.now.withLock { $0 += 3_600_000 }
                let second = try await post(client, "twice", user: "alice")
                #expect(second.status == .ok)
                let secondOrder = try #require(IngestHarness.json(second)["orderNo"]?.string)

                // The third within the day is refused, also when it names an order already signed for.
                time.now.withLock { $0 += 3_600_000 }
                for orderNo in [nil, firstOrder] {
                    let third = try await post(client, "twice", user: "alice", orderNo: orderNo)
                    #expect(third.status == .tooManyRequests)
                    #expect(IngestHarness.errorCode(third) == "offer_limit_reached")
                    #expect(third.headers[.retryAfter] == String(22 * 3600))  // when the first signature leaves the day
                    #expect(IngestHarness.json(third)["signatureV2"] == nil)
                }
                // Refused before an order was made: alice holds the two orders of her signatures, no more.
                #expect(try await redis.send("ZCARD", keys.pendingOrders(user: "alice")).int == 2)
                // Each user has their own limit.
                #expect(try await post(client, "twice", user: "bob").status == .ok)

                // Every signature is recorded: the user's signatures of the offer, and the order that carries its token.
                let signatures = keys.offerSignatures(user: "alice", offerId: "twice")
                let members = (try await redis.send("ZRANGE", signatures, "0", "-1", "WITHSCORES").array ?? []).compactMap(\.string)
                try #require(members.count == 4)
                #expect(members[0].hasPrefix("\(firstOrder)/") && members[1] == String(start))
                #expect(members[2].hasPrefix("\(secondOrder)/") && members[3] == String(start + 3_600_000))
                let ttl = try #require(try await redis.send("PTTL", signatures).int)
                #expect(ttl > 0 && ttl <= 86_400_000)
                for (orderNo, at) in [(firstOrder, start), (secondOrder, start + 3_600_000)] {
                    let signed = try await redis.send("HGET", keys.order(user: "alice", orderNo: orderNo), Order.Field.offer("twice"))
                    #expect(signed.string == String(at))
                }

                // A day after the first signature, one more is allowed; the first no longer counts and is dropped.
                time.now.withLock { $0 = start + 86_400_000 + 1 }
                let later = try await post(client, "twice", user: "alice")
                #expect(later.status == .ok)
                #expect(try await redis.send("ZCARD", signatures).int == 2)
                #expect(try await post(client, "twice", user: "alice").status == .tooManyRequests)
            }
        }
    }

    @Test func signaturesOfAnOfferWithoutALimitAreCappedAndExpire() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            let keys = Keys(prefix: "tg")
            let generous: (inout IngestConfiguration) throws -> Void = { configuration in
                configuration.userRatePerSecond = 10_000
                configuration.userBurst = 10_000
            }
            try await OfferKeyFixture.withApp(server, catalog: try catalog(), configure: generous) { client, _ in
                let created = try await client.execute(
                    uri: "/v1/orders", method: .post, headers: try await IngestHarness.userHeaders("alice"),
                    body: ByteBuffer(string: #"{"productId":"\#(month)"}"#))
                let orderNo = try #require(IngestHarness.json(created)["orderNo"]?.string)
                for _ in 0..<105 {
                    #expect(try await post(client, "loyal3m", user: "alice", orderNo: orderNo).status == .ok)
                }
                let signatures = keys.offerSignatures(user: "alice", offerId: "loyal3m")
                #expect(try await redis.send("ZCARD", signatures).int == 100)
                let ttl = try #require(try await redis.send("PTTL", signatures).int)
                #expect(ttl > 364 * 86_400_000 && ttl <= 365 * 86_400_000)
                #expect(try await redis.send("HEXISTS", keys.order(user: "alice", orderNo: orderNo), Order.Field.offer("loyal3m")).int == 1)
            }
        }
    }
}
