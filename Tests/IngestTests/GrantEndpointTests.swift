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

/// Issue 31, item 5: `POST /v1/users/{userId}/grants` and `DELETE /v1/users/{userId}/grants/{grantId}`.
@Suite struct GrantEndpointTests {
    /// An ISO 8601 time `days` from now.
    static func iso(days: Double) -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date().addingTimeInterval(days * 86_400))
    }

    static func post(
        _ client: some TestClientProtocol, _ body: String, user: String = "alice", key: String = IngestHarness.key(only: .grant)
    ) async throws -> TestResponse {
        try await client.execute(
            uri: "/v1/users/\(user)/grants", method: .post, headers: try IngestHarness.apiKeyHeaders(key),
            body: ByteBuffer(string: body))
    }

    static func entitlements(_ client: some TestClientProtocol, _ headers: HTTPFields) async throws -> JSONValue {
        let response = try await client.execute(uri: "/v1/users/alice/entitlements", method: .get, headers: headers)
        #expect(response.status == .ok)
        return IngestHarness.json(response)
    }

    @Test func aGrantShowsInBothEntitlementCallsAndIsRevokedOnce() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            let keys = Keys(prefix: "tg")
            try await IngestHarness.withApp(server) { client in
                let until = Self.iso(days: 30)
                let created = try await Self.post(
                    client, #"{"entitlement":"vip","until":"\#(until)","reason":"support ticket 42"}"#)
                #expect(created.status == .created)
                let answer = IngestHarness.json(created)
                let grantId = try #require(answer["grantId"]?.string)
                #expect(grantId.hasPrefix("g_"))
                #expect(answer["by"]?.string == "grant-only" && answer["entitlement"]?.string == "vip")
                #expect(answer["userId"]?.string == "alice" && answer["reason"]?.string == "support ticket 42")
                let stored = try await redis.send("HGET", keys.grants(user: "alice"), grantId).string
                #expect(stored.flatMap { JSONValue.read(Array($0.utf8)) }?["by"]?.string == "grant-only")

                // The user's own call and a service's both list it, labelled.
                for headers in [
                    try await IngestHarness.userHeaders("alice"), try IngestHarness.apiKeyHeaders(IngestHarness.key(only: .read)),
                ] {
                    let view = try await Self.entitlements(client, headers)
                    let row = try #require(view["entitlements"]?.array?.first)
                    #expect(row["entitlement"]?.string == "vip" && row["state"]?.string == "active")
                    #expect(row["source"]?.string == "grant" && row["grant"]?["by"]?.string == "grant-only")
                    #expect(row["grant"]?["reason"]?.string == "support ticket 42")
                    #expect(row["grant"]?["grantId"]?.string == grantId && row["expiresAt"] == row["grant"]?["until"])
                }

                let revoke = try await client.execute(
                    uri: "/v1/users/alice/grants/\(grantId)", method: .delete,
                    headers: try IngestHarness.apiKeyHeaders(IngestHarness.key(only: .grant)))
                #expect(revoke.status == .ok)
                #expect(IngestHarness.json(revoke)["grantId"]?.string == grantId)
                #expect(IngestHarness.json(revoke)["revokedBy"]?.string == "grant-only")
                #expect(
                    try await Self.entitlements(client, try await IngestHarness.userHeaders("alice"))["entitlements"]?.array?.isEmpty
                        == true)
                let again = try await client.execute(
                    uri: "/v1/users/alice/grants/\(grantId)", method: .delete,
                    headers: try IngestHarness.apiKeyHeaders(IngestHarness.key(only: .grant)))
                #expect(again.status == .notFound && IngestHarness.errorCode(again) == "not_found")

                // Both changes are events in the user's log, in order.
                let log = try await redis.send("XRANGE", keys.userEvents(user: "alice"), "-", "+").array ?? []
                let types = log.compactMap { entry -> String? in
                    guard let fields = entry.array?.last?.array, let index = fields.firstIndex(where: { $0.string == "event" }),
                        index + 1 < fields.count, let bytes = fields[index + 1].bytes
                    else { return nil }
                    return JSONValue.read(bytes)?["type"]?.string
                }
                #expect(types == ["grant.created", "grant.revoked"])
            }
        }
    }

    @Test func badBodiesAreRefusedWithStableCodesAndWriteNothing() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await IngestHarness.withApp(server) { client in
                let future = Self.iso(days: 30)
                let cases: [(String, HTTPResponse.Status, String)] = [
                    (#"{"entitlement":"gold","until":"\#(future)","reason":"r"}"#, .unprocessableContent, "unknown_entitlement"),
                    (#"{"entitlement":"vip","until":"tomorrow","reason":"r"}"#, .badRequest, "invalid_until"),
                    (#"{"entitlement":"vip","until":"\#(Self.iso(days: -1))","reason":"r"}"#, .badRequest, "invalid_until"),
                    // A past until with a key that names no grant: nothing to replay (issue 42, item 9).
                    (
                        #"{"entitlement":"vip","until":"\#(Self.iso(days: -1))","reason":"r","idempotencyKey":"k1"}"#, .badRequest,
                        "invalid_until"
                    ),
                    (#"{"entitlement":"vip","until":"\#(Self.iso(days: 3700))","reason":"r"}"#, .badRequest, "invalid_until"),
                    (#"{"entitlement":"vip","reason":"r"}"#, .badRequest, "invalid_until"),
                    (#"{"entitlement":"vip","until":"\#(future)","reason":""}"#, .badRequest, "invalid_reason"),
                    (
                        #"{"entitlement":"vip","until":"\#(future)","reason":"\#(String(repeating: "x", count: 201))"}"#, .badRequest,
                        "invalid_reason"
                    ),
                    (#"{"entitlement":"vip","until":"\#(future)"}"#, .badRequest, "invalid_reason"),
                    // A NUL PostgreSQL cannot store (the export would refuse it for good).
                    (#"{"entitlement":"vip","until":"\#(future)","reason":"a\u0000b"}"#, .badRequest, "invalid_reason"),
                    (#"{"entitlement":"vip","until":"\#(future)","reason":7}"#, .badRequest, "invalid_request"),
                    (#"{"reason":"r"}"#, .badRequest, "invalid_request"),
                    (#"{"entitlement":"vip","coins":5,"until":"\#(future)","reason":"r"}"#, .badRequest, "invalid_request"),
                    (#"{"entitlement":"vip","until":"\#(future)","reason":"r","extra":1}"#, .badRequest, "invalid_request"),
                    (#"{"entitlement":"vip","until":"\#(future)","reason":"r","idempotencyKey":"a b"}"#, .badRequest, "invalid_request"),
                    ("[]", .badRequest, "invalid_json"),
                    (#"{"coins":50,"reason":"goodwill"}"#, .forbidden, "coin_grants_disabled"),
                ]
                for (body, status, code) in cases {
                    let response = try await Self.post(client, body)
                    #expect(response.status == status, "\(body)")
                    #expect(IngestHarness.errorCode(response) == code, "\(body)")
                }
                // Bytes that are not UTF-8 in the reason: the JSON reader refuses them before any member is read.
                let notUTF8 = Array(#"{"entitlement":"vip","until":"\#(future)","reason":"a"#.utf8) + [0xFF, 0xFE] + Array(#"b"}"#.utf8)
                let raw = try await client.execute(
                    uri: "/v1/users/alice/grants", method: .post, headers: try IngestHarness.apiKeyHeaders(IngestHarness.key(only: .grant)),
                    body: ByteBuffer(bytes: notUTF8))
                #expect(raw.status == .badRequest && IngestHarness.errorCode(raw) == "invalid_json")
                #expect(try await IngestHarness.dbsize(redis) == 0)
            }
        }
    }

    @Test func coinGrantsNeedTheSettingAndRaiseCoinsAndGrantedCoins() async throws {
        let app = ["TOLLGATE_BUNDLE_ID": "com.example.app"]
        #expect(try IngestConfiguration(environment: app).coinGrants == false)
        #expect(try IngestConfiguration(environment: app.merging(["TOLLGATE_COIN_GRANTS": "true"]) { $1 }).coinGrants == true)
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            let account = Keys(prefix: "tg").account(user: "alice")
            try await IngestHarness.withApp(server, configure: { $0.coinGrants = true }) { client in
                #expect(IngestHarness.errorCode(try await Self.post(client, #"{"coins":0,"reason":"r"}"#)) == "invalid_request")
                #expect(IngestHarness.errorCode(try await Self.post(client, #"{"coins":1.5,"reason":"r"}"#)) == "invalid_request")
                let created = try await Self.post(client, #"{"coins":50,"reason":"goodwill"}"#)
                #expect(created.status == .created)
                #expect(IngestHarness.json(created)["coins"]?.int == 50 && IngestHarness.json(created)["balance"]?.int == 50)
                let hash = try await redis.hgetall(account)
                #expect(hash["coins"] == "50" && hash["coins.granted"] == "50")
                let view = try await Self.entitlements(client, try await IngestHarness.userHeaders("alice"))
                #expect(view["coins"]?.int == 50 && view["coinsGranted"]?.int == 50)
            }
        }
    }

    /// Attacker's check: coin grants never end, so a grant key could grow a user's grants (and every customer read of
    /// them) without bound. A user holds at most `LedgerGrants.maxHeld`; the next is `409 too_many_grants` and writes
    /// nothing (no coins, no event); revoking one makes room.
    @Test func aUserHoldsAtMostTheCapOfGrants() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            let account = Keys(prefix: "tg").account(user: "alice")
            try await IngestHarness.withApp(server, configure: { $0.coinGrants = true }) { client in
                var ids: [String] = []
                for _ in 0..<LedgerGrants.maxHeld {
                    let created = try await Self.post(client, #"{"coins":1,"reason":"r"}"#)
                    #expect(created.status == .created)
                    ids.append(IngestHarness.json(created)["grantId"]?.string ?? "")
                }
                let before = try await redis.hgetall(account)
                let refused = try await Self.post(client, #"{"coins":1,"reason":"one more"}"#)
                #expect(refused.status == .conflict && IngestHarness.errorCode(refused) == "too_many_grants")
                #expect(try await redis.hgetall(account) == before, "nothing written: coins, granted coins, seq")
                let revoked = try await client.execute(
                    uri: "/v1/users/alice/grants/\(ids[0])", method: .delete,
                    headers: try IngestHarness.apiKeyHeaders(IngestHarness.key(only: .grant)))
                #expect(revoked.status == .ok)
                #expect(try await Self.post(client, #"{"coins":1,"reason":"room again"}"#).status == .created)
            }
        }
    }

    @Test func aRetriedGrantWithItsIdempotencyKeyGrantsOnce() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await IngestHarness.withApp(server) { client in
                let body = #"{"entitlement":"vip","until":"\#(Self.iso(days: 3))","reason":"r","idempotencyKey":"ticket-42"}"#
                let first = try await Self.post(client, body)
                let second = try await Self.post(client, body)
                #expect(first.status == .created && second.status == .ok)
                #expect(IngestHarness.json(second)["grantId"] == IngestHarness.json(first)["grantId"])
                #expect(IngestHarness.json(second)["replayed"]?.bool == true)
                #expect(try await redis.send("HLEN", Keys(prefix: "tg").grants(user: "alice")).int == 1)
            }
        }
    }

    /// Issue 42, item 9: the key used again with another body is `409 idempotency_conflict` (as for spends); the same
    /// body replays with the grant's state now, after a revoke (`revoked`) and after its `until` (`expired`).
    @Test func aReusedIdempotencyKeyConflictsOrReplaysWithTheGrantsState() async throws {
        let start: Int64 = 1_767_225_600_000
        let time = ManualTime(start)
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await IngestHarness.withApp(server, clock: time.clock) { client in
                let until = EntitlementsView.iso8601(start + 86_400_000)
                func body(_ key: String, reason: String = "r", until: String = until) -> String {
                    #"{"entitlement":"vip","until":"\#(until)","reason":"\#(reason)","idempotencyKey":"\#(key)"}"#
                }
                let first = try await Self.post(client, body("ticket-1"))
                #expect(first.status == .created && IngestHarness.json(first)["state"]?.string == "active")
                let grantId = try #require(IngestHarness.json(first)["grantId"]?.string)
                for other in [body("ticket-1", reason: "r2"), body("ticket-1", until: EntitlementsView.iso8601(start + 2 * 86_400_000))] {
                    let conflict = try await Self.post(client, other)
                    #expect(conflict.status == .conflict && IngestHarness.errorCode(conflict) == "idempotency_conflict", "\(other)")
                }
                // The same instant written with another offset is the same body.
                let offset = try await Self.post(client, body("ticket-1", until: "2026-01-02T01:00:00+01:00"))
                #expect(offset.status == .ok && IngestHarness.json(offset)["replayed"]?.bool == true)
                #expect(try await redis.send("HLEN", Keys(prefix: "tg").grants(user: "alice")).int == 1)
                // Revoked: the retry says so and grants nothing again.
                let revoke = try await client.execute(
                    uri: "/v1/users/alice/grants/\(grantId)", method: .delete,
                    headers: try IngestHarness.apiKeyHeaders(IngestHarness.key(only: .grant)))
                #expect(revoke.status == .ok)
                let afterRevoke = try await Self.post(client, body("ticket-1"))
                #expect(afterRevoke.status == .ok && IngestHarness.json(afterRevoke)["grantId"]?.string == grantId)
                #expect(IngestHarness.json(afterRevoke)["state"]?.string == "revoked")
                #expect(IngestHarness.json(afterRevoke)["replayed"]?.bool == true)
                #expect(try await redis.send("HLEN", Keys(prefix: "tg").grants(user: "alice")).int == 0)
                // Expired: a retry after its until (now in the past) replays it, and still conflicts with another body.
                let second = try await Self.post(client, body("ticket-2"))
                #expect(second.status == .created)
                time.advance(milliseconds: 2 * 86_400_000)
                let afterEnd = try await Self.post(client, body("ticket-2"))
                #expect(afterEnd.status == .ok && IngestHarness.json(afterEnd)["state"]?.string == "expired")
                #expect(IngestHarness.json(afterEnd)["grantId"] == IngestHarness.json(second)["grantId"])
                let late = try await Self.post(client, body("ticket-2", reason: "r2"))
                #expect(late.status == .conflict && IngestHarness.errorCode(late) == "idempotency_conflict")
                let revokedLater = try await Self.post(client, body("ticket-1"))
                #expect(IngestHarness.json(revokedLater)["state"]?.string == "revoked")
            }
        }
    }
}
