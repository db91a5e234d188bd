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

/// Issue 31 item 1: every service endpoint asks for one scope. Each is tried without a key (`401`), with a user's
/// token (`403 forbidden`: no user reaches these), with a key holding every other scope (`403 missing_scope`) and
/// with a key holding only its scope (answered). A bare key holds every scope.
@Suite(.serialized) struct ServiceKeyScopeTests {
    struct Endpoint: Sendable, CustomStringConvertible {
        var method: HTTPRequest.Method
        var uri: String
        var body: String?
        var scope: ServiceKey.Scope
        /// Other scopes that open the endpoint too.
        var also: Set<ServiceKey.Scope> = []
        /// The answer with the right scope, and its error code when it is one (the call got past the scope check).
        var success: HTTPResponse.Status = .ok
        var successCode: String?
        /// Coins alice holds before the calls (a spend needs them to answer `200`).
        var coins = 0
        var description: String { "\(method) \(uri)" }
    }

    /// A grant's `until`, 30 days from now.
    static let grantUntil: String = ISO8601DateFormatter().string(from: Date().addingTimeInterval(30 * 86_400))

    /// Every service endpoint and its scope.
    static let endpoints: [Endpoint] = [
        Endpoint(method: .get, uri: "/v1/users/alice/events", scope: .read),
        Endpoint(method: .get, uri: "/v1/events", scope: .read),
        Endpoint(method: .put, uri: "/v1/users/alice/consent", body: #"{"consented":true}"#, scope: .consent),
        Endpoint(method: .get, uri: "/v1/users/alice", scope: .read, success: .notFound, successCode: "not_found"),
        Endpoint(method: .get, uri: "/v1/transactions/2000000123", scope: .read, success: .notFound, successCode: "not_found"),
        Endpoint(
            method: .get, uri: "/v1/lookup?originalTransactionId=2000000123", scope: .read, success: .notFound,
            successCode: "not_found"),
        // A look-up that asks Apple (issue 42 item 3): `lookup` or `admin`, never `read` alone; a job for the verifier.
        Endpoint(method: .get, uri: "/v1/lookup?orderId=MSCOPE0001", scope: .lookup, also: [.admin], success: .accepted),
        // Past the gate, the CLI's checks: 91 days and a non-numeric transaction are refused before any job.
        Endpoint(
            method: .post, uri: "/v1/admin/apple/extend", body: #"{"originalTransactionId":"1","days":91}"#, scope: .admin,
            success: .badRequest, successCode: "invalid_request"),
        Endpoint(
            method: .post, uri: "/v1/admin/apple/set-account-token", body: #"{"originalTransactionId":"x1","userId":"alice"}"#,
            scope: .admin, success: .badRequest, successCode: "invalid_request"),
        Endpoint(
            method: .post, uri: "/v1/users/alice/grants", body: #"{"entitlement":"vip","until":"\#(grantUntil)","reason":"scope test"}"#,
            scope: .grant, success: .created),
        // No such grant: the right scope reaches the look-up, which finds nothing.
        Endpoint(
            method: .delete, uri: "/v1/users/alice/grants/g_0123456789abcdef", scope: .grant, success: .notFound,
            successCode: "not_found"),
        // The scoped and the bare key send the same spend: each key's is its own (the record is per key name, issue 42,
        // item 12), so the balance covers two.
        Endpoint(
            method: .post, uri: "/v1/users/alice/coins/spend", body: #"{"amount":5,"reason":"scope","idempotencyKey":"s1"}"#,
            scope: .spend, coins: 10),
    ]

    @Test(arguments: endpoints)
    func eachScopeIsTestedBothWays(endpoint: Endpoint) async throws {
        try await withRedisServer { server in
            if endpoint.coins > 0 {
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                _ = try await redis.send(RedisCommand("HSET", Keys(prefix: "tg").account(user: "alice"), "coins", endpoint.coins))
            }
            try await IngestHarness.withApp(server) { client in
                func call(_ headers: HTTPFields) async throws -> TestResponse {
                    try await client.execute(
                        uri: endpoint.uri, method: endpoint.method, headers: headers,
                        body: endpoint.body.map { ByteBuffer(string: $0) })
                }
                let anonymous = try await call([:])
                #expect(anonymous.status == .unauthorized, "\(endpoint)")
                let user = try await call(try await IngestHarness.userHeaders("alice"))
                #expect(user.status == .forbidden && IngestHarness.errorCode(user) == "forbidden", "\(endpoint)")
                for other in ServiceKey.Scope.allCases where other != endpoint.scope && !endpoint.also.contains(other) {
                    let response = try await call(try IngestHarness.apiKeyHeaders(IngestHarness.key(only: other)))
                    #expect(response.status == .forbidden, "\(endpoint) with \(other)")
                    #expect(IngestHarness.errorCode(response) == "missing_scope", "\(endpoint) with \(other)")
                }
                for scope in [endpoint.scope] + endpoint.also.sorted() {
                    let scoped = try await call(try IngestHarness.apiKeyHeaders(IngestHarness.key(only: scope)))
                    #expect(scoped.status == endpoint.success, "\(endpoint) with \(scope)")
                    #expect(IngestHarness.errorCode(scoped) == endpoint.successCode, "\(endpoint) with \(scope)")
                }
                let bare = try await call(IngestHarness.bearer(IngestHarness.serviceKey))
                #expect(bare.status == endpoint.success, "\(endpoint) with a bare key")
                #expect(IngestHarness.errorCode(bare) == endpoint.successCode, "\(endpoint) with a bare key")
            }
        }
    }

    /// A service reads any user's job and entitlements with `read`; without it, it reads none (a user reads their own).
    @Test func readingAUsersDataNeedsTheReadScope() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                let uri = "/v1/users/alice/entitlements"
                #expect(
                    try await client.execute(
                        uri: uri, method: .get, headers: try IngestHarness.apiKeyHeaders(IngestHarness.key(only: .read))
                    ).status == .ok)
                let spender = try await client.execute(
                    uri: uri, method: .get, headers: try IngestHarness.apiKeyHeaders(IngestHarness.key(only: .spend)))
                #expect(spender.status == .forbidden)
                #expect(
                    try await client.execute(uri: uri, method: .get, headers: try await IngestHarness.userHeaders("alice")).status == .ok)
                #expect(
                    try await client.execute(uri: uri, method: .get, headers: try await IngestHarness.userHeaders("bob")).status
                        == .forbidden)
            }
        }
    }

    /// The consent a key records names the key (its name, never the key).
    @Test func consentRecordsWhichKeyCalled() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                let response = try await client.execute(
                    uri: "/v1/users/alice/consent", method: .put,
                    headers: try IngestHarness.apiKeyHeaders(IngestHarness.key(only: .consent)),
                    body: ByteBuffer(string: #"{"consented":true}"#))
                #expect(response.status == .ok)
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                #expect(try await redis.hgetall(Keys(prefix: "tg").consent(user: "alice"))["by"] == "consent-only")
            }
        }
    }
}
