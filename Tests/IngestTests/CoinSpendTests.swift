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

/// Issue 31 item 4: `POST /v1/users/{userId}/coins/spend` against a real ingest and redis-server. Coins are credited
/// by writing the balance directly (the ledger's own tests credit through purchases, `LedgerSpendTests`); who may call
/// is `ServiceKeyScopeTests`' table.
@Suite struct CoinSpendTests {
    static let keys = Keys(prefix: "tg")

    static func spend(
        _ client: any TestClientProtocol, user: String = "alice", _ body: String,
        key: String = IngestHarness.key(only: .spend)
    ) async throws -> TestResponse {
        try await client.execute(
            uri: "/v1/users/\(user)/coins/spend", method: .post, headers: try IngestHarness.apiKeyHeaders(key),
            body: ByteBuffer(string: body))
    }

    static func body(amount: String = "30", reason: String = "sword", key: String = "k1") -> String {
        #"{"amount":\#(amount),"reason":"\#(reason)","idempotencyKey":"\#(key)"}"#
    }

    static func credit(_ redis: RedisConnection, _ coins: Int, user: String = "alice") async throws {
        _ = try await redis.send(RedisCommand("HINCRBY", keys.account(user: user), "coins", coins))
    }

    static func coins(_ redis: RedisConnection, _ user: String = "alice") async throws -> String? {
        try await redis.hgetall(keys.account(user: user))["coins"]
    }

    /// `200` with the balance after and the event's seq and id; the event (`coins.spent`, the user's next seq, the key's
    /// name as `by`) is in the user's log and on the partition's events stream.
    @Test func aSpendWithinTheBalanceAnswersTheBalanceAndWritesTheNextEvent() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await Self.credit(redis, 100)
            // Four earlier events: the spend's is the fifth.
            _ = try await redis.send(RedisCommand("HSET", Self.keys.account(user: "alice"), "events.seq", "4"))
            try await IngestHarness.withApp(server) { client in
                let response = try await Self.spend(client, Self.body())
                #expect(response.status == .ok, "\(IngestHarness.json(response))")
                let answer = IngestHarness.json(response)
                #expect(answer["userId"]?.string == "alice" && answer["amount"]?.int == 30)
                #expect(answer["balance"]?.int == 70 && answer["seq"]?.int == 5)
                let eventId = try #require(answer["eventId"]?.string)
                #expect(eventId.hasPrefix("evt_"))
                #expect(answer["at"]?.string?.hasSuffix("Z") == true)
                #expect(response.headers[try #require(HTTPField.Name("Idempotent-Replayed"))] == nil)
                #expect(try await Self.coins(redis) == "70")

                let log = try await redis.xrange(Self.keys.userEvents(user: "alice"))
                #expect(log.map(\.id) == ["5-0"])
                let event = try #require(JSONValue.read(log.first?.fields["event"] ?? []))
                #expect(event["type"]?.string == "coins.spent" && event["id"]?.string == eventId && event["seq"]?.int == 5)
                #expect(event["amount"]?.int == 30 && event["delta"]?.int == -30 && event["balance"]?.int == 70)
                #expect(event["reason"]?.string == "sword" && event["idempotencyKey"]?.string == "k1")
                #expect(event["by"]?.string == "spend-only" && event["userId"]?.string == "alice")
                #expect(event["at"]?.string == answer["at"]?.string)
                let stream = try await redis.xrange(Self.keys.events().stream)
                #expect(stream.count == 1)
                #expect(stream.first?.string("event.type") == "coins.spent" && stream.first?.string("user") == "alice")
                #expect(stream.first?.string("seq") == "5" && stream.first?.fields["event"] == log.first?.fields["event"])
            }
        }
    }

    /// `409 insufficient_coins` with the balance; nothing written and nothing remembered, so the same request after a
    /// credit succeeds (a refused spend is judged again, never replayed).
    @Test func aSpendAboveTheBalanceIsRefusedWithTheBalanceAndLeavesNothing() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await Self.credit(redis, 50)
            try await IngestHarness.withApp(server) { client in
                let before = try await IngestHarness.dbsize(redis)
                let refused = try await Self.spend(client, Self.body(amount: "80"))
                #expect(refused.status == .conflict)
                #expect(IngestHarness.errorCode(refused) == "insufficient_coins")
                #expect(IngestHarness.json(refused)["error"]?["balance"]?.int == 50)
                #expect(try await Self.coins(redis) == "50")
                #expect(try await IngestHarness.dbsize(redis) == before)  // no event, no log, no idempotency record
                #expect(try await redis.xlen(Self.keys.events().stream) == 0)

                try await Self.credit(redis, 50)
                let retried = try await Self.spend(client, Self.body(amount: "80"))
                #expect(retried.status == .ok)
                #expect(IngestHarness.json(retried)["balance"]?.int == 20 && IngestHarness.json(retried)["seq"]?.int == 1)
            }
        }
    }

    /// The same key and body: the same answer bytes, one debit, one event. The same key with another amount or reason:
    /// `409 idempotency_conflict`, nothing written. The key is kept 7 days.
    @Test func aRetryGetsTheSameAnswerAndAnotherBodyUnderTheKeyConflicts() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await Self.credit(redis, 100)
            try await IngestHarness.withApp(server) { client in
                let first = try await Self.spend(client, Self.body())
                let second = try await Self.spend(client, Self.body())
                #expect(first.status == .ok && second.status == .ok)
                #expect(Array(first.body.readableBytesView) == Array(second.body.readableBytesView))
                #expect(second.headers[try #require(HTTPField.Name("Idempotent-Replayed"))] == "true")
                // Another service key's same idempotency key is its own spend (issue 42, item 12: the record is the
                // calling key's, by name), neither a replay of this one nor a conflict with it.
                let bare = try await Self.spend(client, Self.body(reason: "shield"), key: IngestHarness.serviceKey)
                #expect(bare.status == .ok && IngestHarness.json(bare)["balance"]?.int == 40)
                #expect(bare.headers[try #require(HTTPField.Name("Idempotent-Replayed"))] == nil)

                for other in [Self.body(amount: "31"), Self.body(reason: "shield")] {
                    let conflict = try await Self.spend(client, other)
                    #expect(conflict.status == .conflict && IngestHarness.errorCode(conflict) == "idempotency_conflict")
                }
                #expect(try await Self.coins(redis) == "40")
                #expect(try await redis.xlen(Self.keys.userEvents(user: "alice")) == 2)
                #expect(try await redis.xlen(Self.keys.events().stream) == 2)
                let ttl = try await redis.send("TTL", Self.keys.coinSpend(user: "alice", by: "spend-only", idempotencyKey: "k1")).int ?? -1
                #expect(ttl > 6 * 86_400 && ttl <= 7 * 86_400)
                // Another key is another spend.
                let next = try await Self.spend(client, Self.body(key: "k2"))
                #expect(IngestHarness.json(next)["balance"]?.int == 10 && IngestHarness.json(next)["seq"]?.int == 3)
            }
        }
    }

    /// 100 spends at once, each under its own key, of a balance that covers exactly one: exactly one succeeds, the
    /// balance ends at 0 with one event, and every other answer is `insufficient_coins`.
    @Test func concurrentSpendsOfOneCoinsWorthSpendItOnce() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await Self.credit(redis, 25)
            try await IngestHarness.withApp(server) { client in
                let answers = try await withThrowingTaskGroup(of: (HTTPResponse.Status, String?).self) { group in
                    for index in 0..<100 {
                        group.addTask {
                            let response = try await Self.spend(client, Self.body(amount: "25", key: "race-\(index)"))
                            return (response.status, IngestHarness.errorCode(response))
                        }
                    }
                    var all: [(HTTPResponse.Status, String?)] = []
                    for try await answer in group { all.append(answer) }
                    return all
                }
                #expect(answers.count == 100)
                #expect(answers.filter { $0.0 == .ok }.count == 1)
                #expect(answers.filter { $0.0 == .conflict && $0.1 == "insufficient_coins" }.count == 99)
                #expect(try await Self.coins(redis) == "0")
                #expect(try await redis.xlen(Self.keys.userEvents(user: "alice")) == 1)
                #expect(try await redis.xlen(Self.keys.events().stream) == 1)
            }
        }
    }

    /// Redis down: `503 redis_unavailable`. Replicas missing: `503 replication_timeout`, and the retry the client makes
    /// with the same key spends nothing more.
    @Test func redisDownOrReplicasMissingAnswer503() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await Self.credit(redis, 100)
            try await IngestHarness.withApp(
                server,
                configure: {
                    $0.waitReplicas = 1
                    $0.waitTimeoutMilliseconds = 50
                }
            ) { client in
                for _ in 0..<2 {
                    let response = try await Self.spend(client, Self.body())
                    #expect(response.status == .serviceUnavailable && IngestHarness.errorCode(response) == "replication_timeout")
                }
                #expect(try await Self.coins(redis) == "70")
                #expect(try await redis.xlen(Self.keys.userEvents(user: "alice")) == 1)
            }
        }
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                await server.kill()
                let response = try await Self.spend(client, Self.body())
                #expect(response.status == .serviceUnavailable && IngestHarness.errorCode(response) == "redis_unavailable")
                #expect(response.headers[.retryAfter] != nil)
            }
        }
    }

    /// Bodies out of bounds answer `400` with a stable code and write nothing; so does a user id that is not one.
    @Test func badBodiesAndUserIDsAreRefusedAndWriteNothing() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await Self.credit(redis, 1000)
            try await IngestHarness.withApp(server) { client in
                let before = try await IngestHarness.dbsize(redis)
                let longReason = String(repeating: "r", count: 201)
                let longKey = String(repeating: "k", count: 129)
                let refused: [(body: String, code: String)] = [
                    (#"{"reason":"sword","idempotencyKey":"k1"}"#, "invalid_request"),  // no amount
                    (Self.body(amount: "-5"), "invalid_request"),
                    (Self.body(amount: "0"), "invalid_request"),
                    (Self.body(amount: "1000000000001"), "invalid_request"),
                    (Self.body(amount: "99999999999999999999999"), "invalid_request"),
                    (Self.body(amount: "1.5"), "invalid_request"),
                    (Self.body(amount: "10.0"), "invalid_request"),
                    (Self.body(amount: "1e3"), "invalid_request"),
                    (Self.body(amount: #""10""#), "invalid_request"),
                    (Self.body(amount: "null"), "invalid_request"),
                    (#"{"amount":5,"idempotencyKey":"k1"}"#, "invalid_request"),  // no reason
                    (Self.body(reason: ""), "invalid_request"),
                    (Self.body(reason: longReason), "invalid_request"),
                    (Self.body(reason: #"a\u0000b"#), "invalid_request"),  // a NUL PostgreSQL cannot store
                    (#"{"amount":5,"reason":7,"idempotencyKey":"k1"}"#, "invalid_request"),
                    (#"{"amount":5,"reason":"sword"}"#, "invalid_request"),  // no key
                    (Self.body(key: ""), "invalid_request"),
                    (Self.body(key: "with space"), "invalid_request"),
                    (Self.body(key: "a/b"), "invalid_request"),
                    (Self.body(key: "caf\u{e9}"), "invalid_request"),
                    (Self.body(key: longKey), "invalid_request"),
                    ("[", "invalid_json"),
                    ("[1]", "invalid_json"),
                    ("", "invalid_json"),
                ]
                for (body, code) in refused {
                    let response = try await Self.spend(client, body)
                    #expect(response.status == .badRequest, "\(body)")
                    #expect(IngestHarness.errorCode(response) == code, "\(body)")
                }
                // The bounds themselves are taken: a 200-byte reason, a 128-byte key of every allowed character.
                let edgeKey = "Az09._:-" + String(repeating: "x", count: 120)
                let edge = try await Self.spend(client, Self.body(amount: "1", reason: String(repeating: "r", count: 200), key: edgeKey))
                #expect(edge.status == .ok, "\(IngestHarness.json(edge))")
                _ = try await redis.send("DEL", Self.keys.coinSpend(user: "alice", by: "spend-only", idempotencyKey: edgeKey))
                _ = try await redis.send("DEL", Self.keys.legacyCoinSpend(user: "alice", idempotencyKey: edgeKey))
                _ = try await redis.send("DEL", Self.keys.userEvents(user: "alice"))
                _ = try await redis.send("DEL", Self.keys.events().stream)
                try await Self.credit(redis, 1)

                for user in ["a%7Bb", "a:b", String(repeating: "u", count: 129)] {
                    let response = try await Self.spend(client, user: user, Self.body())
                    #expect(response.status == .badRequest && IngestHarness.errorCode(response) == "invalid_request", "\(user)")
                }
                let huge = try await Self.spend(client, Self.body(reason: String(repeating: "r", count: 5000)))
                #expect(huge.status == .contentTooLarge && IngestHarness.errorCode(huge) == "payload_too_large")
                #expect(try await Self.coins(redis) == "1000")
                #expect(try await IngestHarness.dbsize(redis) == before)
            }
        }
    }
}
