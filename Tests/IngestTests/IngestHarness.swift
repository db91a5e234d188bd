import AppStore
import AppStoreTesting
import Core
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import JWTKit
import Ledger
import Logging
import Pipeline
import Redis
import ServiceKit
import TestSupport
import Testing

@testable import ingest

/// Builds ingest against a real `redis-server` and provides tokens, vectors and Redis helpers for the tests.
enum IngestHarness {
    static let secret = "test-client-secret-0123456789abcdefghij"
    /// A bare key: every scope (as keys were before scopes).
    static let serviceKey = "test-service-key-0123456789abcdefghij"

    /// A key holding only `scope`, named `<scope>-only` (``ServiceKey``).
    static func key(only scope: ServiceKey.Scope) -> String { "test-\(scope.rawValue)-key-0123456789abcdefghijklmnop" }

    static func catalog() throws -> Catalog {
        try Catalog(products: [
            Product(productId: "com.example.coins100", type: .consumable, coins: 100),
            Product(productId: "com.example.vip.month", type: .autoRenewable, entitlement: "vip"),
        ])
    }

    /// The app of the test-signed notification vectors (sandbox), which the door takes.
    static let app = AppIdentity(bundleId: "com.example.tollgate", environment: .sandbox)

    static func configuration(_ server: RedisServer) throws -> IngestConfiguration {
        var shared = SharedConfiguration(redis: server.configuration(commandTimeout: .seconds(2)))
        shared.keys = Keys(prefix: "tg")
        var configuration = IngestConfiguration(shared: shared, app: app, catalog: try catalog())
        configuration.port = 0
        configuration.clientJWTSecret = secret
        configuration.serviceKeys =
            try [ServiceKey(entry: serviceKey)]
            + ServiceKey.Scope.allCases.map { try ServiceKey(entry: "\($0.rawValue)-only:\($0.rawValue):\(key(only: $0))") }
        configuration.backlogSampleInterval = .milliseconds(100)
        configuration.opsOnPublicListener = true  // one in-process router serves the operators' endpoints too
        configuration.rootCertificates = [
            AppleRootCertificates.appleRootCAG3, try testAuthority.get().rootDER, try Vectors.testSignedRootDER,
        ]
        return configuration
    }

    /// A `configure` step for ``withApp(_:configure:framework:_:)`` splitting the data into `count` partitions.
    static func partitions(_ count: Int) -> (inout IngestConfiguration) throws -> Void {
        { configuration in configuration.shared.keys = Keys(prefix: "tg", layout: try PartitionLayout(count: count)) }
    }

    /// Runs `body` against a freshly built app (real Redis, in-process router with its services running).
    static func withApp(
        _ server: RedisServer, configure: (inout IngestConfiguration) throws -> Void = { _ in },
        framework: TestingSetup = .router, clock: PipelineClock = .system,
        _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        var configuration = try configuration(server)
        try configure(&configuration)
        let app = try await App.build(configuration: configuration, logger: testLogger, clock: clock)
        try await app.test(framework) { client in try await body(client) }
    }

    /// A dedicated connection to the test server, for checks and the test "fulfiller".
    static func redis(_ server: RedisServer) async throws -> RedisConnection {
        let connection = RedisConnection(configuration: server.configuration(), logger: testLogger)
        try await connection.connect()
        return connection
    }

    /// A user token signed with the test secret.
    static func token(user: String, expiresIn: TimeInterval = 300, secret: String = secret) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(UserClaims(sub: .init(value: user), exp: .init(value: Date().addingTimeInterval(expiresIn))))
    }

    /// A service key (the bare one unless said) in an `X-Api-Key` header.
    static func apiKeyHeaders(_ key: String = serviceKey) throws -> HTTPFields {
        var fields = HTTPFields()
        fields[try #require(HTTPField.Name("X-Api-Key"))] = key
        return fields
    }

    static func bearer(_ token: String) -> HTTPFields { [.authorization: "Bearer \(token)"] }

    static func userHeaders(_ user: String) async throws -> HTTPFields { bearer(try await token(user: user)) }

    /// The test-signed V2 notification vector, as Apple would post it.
    static func notificationBody(extra: String = "") throws -> [UInt8] {
        Array("{\"signedPayload\":\"\(try appleNotificationJWS())\"\(extra)}".utf8)
    }

    /// The test-signed V2 notification vector's `signedPayload` (a `DID_RENEW` of ``app``, sandbox, with its nested
    /// transaction and renewal info; the fixtures' test root is trusted next to Apple's).
    static func appleNotificationJWS() throws -> String {
        try Vectors.testSigned("notification-did_renew-sandbox-1.jws")
    }

    /// A test CA whose root the test configuration trusts next to Apple's: distinct notifications need distinct
    /// signed payloads (ingest deduplicates a V2 notification by its `signedPayload`, whatever JSON wraps it).
    static let testAuthority = Result { try TestCertificateAuthority() }

    /// A V2 notification of its own, signed by ``testAuthority``, about as large as a real Apple `DID_RENEW` (18.6 KB).
    static func distinctNotificationBody(_ seed: String, bundleId: String = app.bundleId) throws -> [UInt8] {
        let payload = JSONValue.object([
            "notificationType": .string("DID_RENEW"), "notificationUUID": .string("ingest-test-\(seed)"),
            "signedDate": .integer(1_767_225_600_000),
            "data": .object(["bundleId": .string(bundleId), "environment": .string("Sandbox")]),
            "padding": .string(String(repeating: "x", count: 13_000)),
        ])
        let jws = try testAuthority.get().signer().sign(json: payload.data)
        return Array("{\"signedPayload\":\"\(jws)\"}".utf8)
    }

    /// A signed transaction vector of ``app`` (test-signed).
    static func transactionJWS() throws -> String {
        try Vectors.testSigned("transaction-auto_renewable_subscription-sandbox-1.jws")
    }

    /// `Tests/Fixtures` in the repository.
    static var vectors: URL { Vectors.directory }

    /// The answer's body read by Core's reader; `null` when it is not JSON.
    static func json(_ response: TestResponse) -> JSONValue {
        JSONValue.read(response.body.readableBytesView) ?? .null
    }

    static func errorCode(_ response: TestResponse) -> String? {
        json(response)["error"]?["code"]?.string
    }

    /// The keys in Redis besides the partition layout record every service writes at start (``Keys/layoutRecord``):
    /// what a request left behind.
    static func dbsize(_ redis: RedisConnection) async throws -> Int64 {
        let all = try await redis.send("DBSIZE").int ?? -1
        let layout = try await redis.send("EXISTS", Keys(prefix: "tg").layoutRecord).int ?? 0
        return all - layout
    }

    static func base64URL(_ text: String) -> String {
        Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }
}
