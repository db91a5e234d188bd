import AppStore
import Core
import Crypto
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

/// `Services/Ingest/openapi.yaml` cannot drift from the code: ingest serves it byte for byte at `GET /openapi.yaml`;
/// its operations are exactly the routes ingest registers; every documented operation is called against a real
/// ingest (real redis-server) with a minimal valid and an invalid request, and each answer's status is the one
/// expected and one the document lists for that operation; every error code an answer carries, and every code
/// `IngestError` defines, is in the document's `Error.code` enum and the other way round.
@Suite struct OpenAPIDocumentTests {
    /// The document's operations: `"METHOD /path"` → documented response statuses; and the `Error.code` enum.
    struct Document {
        var operations: [String: Set<Int>] = [:]
        var errorCodes: Set<String> = []

        /// Reads the block-style YAML the document is written in: paths at indent 2 under `paths:`, methods at 4,
        /// `responses:` at 6 and statuses at 8; the error codes are the `enum:` list under the first `code:`.
        init(yaml: String) {
            let lines = yaml.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            func indent(_ line: String) -> Int { line.prefix { $0 == " " }.count }
            var inPaths = false
            var path: String?
            var operation: String?
            var inResponses = false
            for line in lines where !line.trimmingCharacters(in: .whitespaces).isEmpty {
                let text = line.trimmingCharacters(in: .whitespaces)
                switch indent(line) {
                case 0:
                    inPaths = text == "paths:"
                case 2 where inPaths:
                    path = String(text.dropLast())
                    operation = nil
                case 4 where inPaths:
                    operation = path.map { "\(text.dropLast().uppercased()) \($0)" }
                    if let operation { operations[operation, default: []] = [] }
                case 6 where inPaths:
                    inResponses = text == "responses:"
                case 8 where inPaths && inResponses:
                    let status = text.trimmingCharacters(in: CharacterSet(charactersIn: "\":"))
                    if let operation, let code = Int(status) { operations[operation]?.insert(code) }
                default:
                    break
                }
            }
            if let code = lines.firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "code:" }),
                let list = lines[code...].firstIndex(where: { $0.trimmingCharacters(in: .whitespaces) == "enum:" })
            {
                for line in lines[(list + 1)...] {
                    let text = line.trimmingCharacters(in: .whitespaces)
                    guard text.hasPrefix("- ") else { break }
                    errorCodes.insert(String(text.dropFirst(2)))
                }
            }
        }
    }

    /// One call of the table below: the operation it exercises, what it sends and the status it must get.
    struct Call: Sendable {
        var operation: String
        var uri: String
        var headers: HTTPFields = [:]
        var body: String?
        var expected: Int
    }

    static var sourceFile: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Services/Ingest/openapi.yaml")
    }

    /// Every code `IngestError` can carry (`code: "…"` in its source).
    static func ingestErrorCodes() throws -> Set<String> {
        let source = try String(
            contentsOf: sourceFile.deletingLastPathComponent().appendingPathComponent("IngestError.swift"), encoding: .utf8)
        let pattern = try Regex(#"code: "([a-z_0-9]+)""#)
        return Set(source.matches(of: pattern).compactMap { $0.output[1].substring.map(String.init) })
    }

    /// A grant's `until`, 30 days from now.
    static let grantUntil: String = ISO8601DateFormatter().string(from: Date().addingTimeInterval(30 * 86_400))

    /// Minimal valid and invalid calls of every operation; `jobId` is a job the valid receipt created.
    static func calls(alice: HTTPFields, bob: HTTPFields, service: HTTPFields, jobId: String) throws -> [Call] {
        let notification = String(decoding: try IngestHarness.distinctNotificationBody("openapi"), as: UTF8.self)
        let jws = try IngestHarness.transactionJWS()
        return [
            Call(operation: "GET /v1/products", uri: "/v1/products", expected: 200),
            Call(operation: "GET /openapi.yaml", uri: "/openapi.yaml", expected: 200),
            Call(operation: "GET /healthz", uri: "/healthz", expected: 200),
            Call(operation: "GET /readyz", uri: "/readyz", expected: 200),
            Call(operation: "GET /metrics", uri: "/metrics", expected: 200),
            Call(operation: "POST /v1/apple/notifications", uri: "/v1/apple/notifications", body: notification, expected: 200),
            Call(operation: "POST /v1/apple/notifications", uri: "/v1/apple/notifications", body: "{}", expected: 400),
            Call(
                operation: "POST /v1/apple/notifications", uri: "/v1/apple/notifications",
                body: String(
                    decoding: try IngestHarness.distinctNotificationBody("openapi-other", bundleId: "com.example.other"), as: UTF8.self),
                expected: 403),
            Call(operation: "POST /v1/apple/notifications", uri: "/v1/apple/notifications", body: "[", expected: 400),
            Call(operation: "POST /v1/receipts", uri: "/v1/receipts", headers: alice, body: #"{"receipt":"QUJDRA=="}"#, expected: 202),
            Call(operation: "POST /v1/receipts", uri: "/v1/receipts", body: #"{"receipt":"QUJDRA=="}"#, expected: 401),
            Call(operation: "POST /v1/receipts", uri: "/v1/receipts", headers: alice, body: "{}", expected: 400),
            Call(
                operation: "POST /v1/receipts", uri: "/v1/receipts?wait=31", headers: alice, body: #"{"receipt":"QUJDRA=="}"#, expected: 400
            ),
            Call(operation: "POST /v1/receipts", uri: "/v1/receipts", headers: service, body: #"{"receipt":"QUJDRA=="}"#, expected: 403),
            Call(
                operation: "POST /v1/transactions", uri: "/v1/transactions", headers: alice, body: #"{"signedTransaction":"\#(jws)"}"#,
                expected: 202),
            Call(
                operation: "POST /v1/transactions", uri: "/v1/transactions", headers: alice, body: #"{"signedTransaction":"x"}"#,
                expected: 400),
            Call(
                operation: "POST /v1/orders", uri: "/v1/orders", headers: alice, body: #"{"productId":"com.example.coins100"}"#,
                expected: 201),
            Call(
                operation: "POST /v1/orders", uri: "/v1/orders", headers: alice, body: #"{"productId":"com.example.nothing"}"#,
                expected: 422),
            Call(operation: "POST /v1/orders", uri: "/v1/orders", body: #"{"productId":"com.example.coins100"}"#, expected: 401),
            Call(
                operation: "POST /v1/offers/promotional", uri: "/v1/offers/promotional", headers: alice,
                body: #"{"productId":"com.example.vip.month","offerId":"winback50"}"#, expected: 200),
            Call(
                operation: "POST /v1/offers/promotional", uri: "/v1/offers/promotional", headers: alice,
                body: #"{"productId":"com.example.vip.month","offerId":"nothing"}"#, expected: 422),
            Call(
                operation: "POST /v1/offers/promotional", uri: "/v1/offers/promotional", headers: alice,
                body: #"{"productId":"com.example.vip.month","offerId":"winback50","orderNo":"ord_none"}"#, expected: 404),
            Call(
                operation: "POST /v1/offers/promotional", uri: "/v1/offers/promotional", headers: alice,
                body: #"{"productId":"com.example.vip.month","offerId":"upsell"}"#, expected: 403),
            Call(
                operation: "POST /v1/offers/introductory", uri: "/v1/offers/introductory", headers: alice,
                body: #"{"productId":"com.example.vip.month"}"#, expected: 200),
            Call(
                operation: "POST /v1/offers/introductory", uri: "/v1/offers/introductory", headers: alice,
                body: #"{"productId":"com.example.coins100"}"#, expected: 422),
            Call(operation: "GET /v1/jobs/{jobId}", uri: "/v1/jobs/\(jobId)", headers: alice, expected: 200),
            Call(operation: "GET /v1/jobs/{jobId}", uri: "/v1/jobs/\(jobId)", headers: service, expected: 200),
            Call(operation: "GET /v1/jobs/{jobId}", uri: "/v1/jobs/\(jobId)", headers: bob, expected: 403),
            Call(operation: "GET /v1/jobs/{jobId}", uri: "/v1/jobs/\(jobId)", expected: 401),
            Call(operation: "GET /v1/jobs/{jobId}", uri: "/v1/jobs/\(String(repeating: "0", count: 32))", headers: service, expected: 404),
            Call(operation: "GET /v1/users/{userId}/entitlements", uri: "/v1/users/alice/entitlements", headers: alice, expected: 200),
            Call(operation: "GET /v1/users/{userId}/entitlements", uri: "/v1/users/alice/entitlements", headers: bob, expected: 403),
            Call(operation: "GET /v1/users/{userId}/entitlements", uri: "/v1/users/alice/entitlements", expected: 401),
            Call(operation: "GET /v1/users/{userId}/entitlements", uri: "/v1/users/a%7Bb/entitlements", headers: service, expected: 404),
            Call(
                operation: "GET /v1/users/{userId}/events", uri: "/v1/users/alice/events?after=0&limit=10", headers: service, expected: 200),
            Call(operation: "GET /v1/users/{userId}/events", uri: "/v1/users/alice/events?limit=0", headers: service, expected: 400),
            Call(operation: "GET /v1/users/{userId}/events", uri: "/v1/users/alice/events", headers: alice, expected: 403),
            Call(operation: "GET /v1/users/{userId}/events", uri: "/v1/users/alice/events", expected: 401),
            Call(operation: "GET /v1/users/{userId}", uri: "/v1/users/alice", headers: service, expected: 200),
            Call(operation: "GET /v1/users/{userId}", uri: "/v1/users/carol", headers: service, expected: 404),
            Call(operation: "GET /v1/users/{userId}", uri: "/v1/users/alice", headers: alice, expected: 403),
            Call(operation: "GET /v1/users/{userId}", uri: "/v1/users/alice", expected: 401),
            Call(operation: "GET /v1/transactions/{transactionId}", uri: "/v1/transactions/2000000001", headers: service, expected: 404),
            Call(operation: "GET /v1/transactions/{transactionId}", uri: "/v1/transactions/2000000001", headers: alice, expected: 403),
            Call(operation: "GET /v1/transactions/{transactionId}", uri: "/v1/transactions/2000000001", expected: 401),
            Call(operation: "GET /v1/lookup", uri: "/v1/lookup?originalTransactionId=2000000001", headers: service, expected: 404),
            Call(operation: "GET /v1/lookup", uri: "/v1/lookup", headers: service, expected: 400),
            Call(operation: "GET /v1/lookup", uri: "/v1/lookup?orderId=MK5TTTVWJH", headers: service, expected: 202),
            Call(
                operation: "POST /v1/admin/apple/extend", uri: "/v1/admin/apple/extend", headers: service,
                body: #"{"originalTransactionId":"2000000001","days":7}"#, expected: 202),
            Call(
                operation: "POST /v1/admin/apple/extend", uri: "/v1/admin/apple/extend", headers: service,
                body: #"{"originalTransactionId":"2000000001","days":0}"#, expected: 400),
            Call(
                operation: "POST /v1/admin/apple/extend", uri: "/v1/admin/apple/extend", headers: alice,
                body: #"{"originalTransactionId":"2000000001","days":7}"#, expected: 403),
            Call(operation: "POST /v1/admin/apple/extend", uri: "/v1/admin/apple/extend", body: "{}", expected: 401),
            Call(
                operation: "POST /v1/admin/apple/set-account-token", uri: "/v1/admin/apple/set-account-token", headers: service,
                body: #"{"originalTransactionId":"2000000001","userId":"alice"}"#, expected: 202),
            Call(
                operation: "POST /v1/admin/apple/set-account-token", uri: "/v1/admin/apple/set-account-token", headers: service,
                body: #"{"originalTransactionId":"2000000001"}"#, expected: 400),
            Call(
                operation: "POST /v1/admin/apple/set-account-token", uri: "/v1/admin/apple/set-account-token", headers: alice,
                body: "{}", expected: 403),
            Call(operation: "POST /v1/admin/apple/set-account-token", uri: "/v1/admin/apple/set-account-token", body: "{}", expected: 401),
            Call(operation: "GET /v1/lookup", uri: "/v1/lookup?originalTransactionId=1", headers: alice, expected: 403),
            Call(operation: "GET /v1/lookup", uri: "/v1/lookup?originalTransactionId=1", expected: 401),
            Call(operation: "GET /v1/events", uri: "/v1/events?limit=5", headers: service, expected: 200),
            Call(operation: "GET /v1/events", uri: "/v1/events?cursor=%21", headers: service, expected: 400),
            Call(operation: "GET /v1/events", uri: "/v1/events", headers: alice, expected: 403),
            Call(operation: "GET /v1/events", uri: "/v1/events", expected: 401),
            Call(operation: "GET /v1/users/{userId}/events", uri: "/v1/users/a%7Bb/events", headers: service, expected: 404),
            Call(
                operation: "PUT /v1/users/{userId}/consent", uri: "/v1/users/alice/consent", headers: service,
                body: #"{"consented":true}"#, expected: 200),
            Call(
                operation: "PUT /v1/users/{userId}/consent", uri: "/v1/users/alice/consent", headers: alice,
                body: #"{"consented":true}"#, expected: 403),
            Call(operation: "PUT /v1/users/{userId}/consent", uri: "/v1/users/alice/consent", body: #"{"consented":true}"#, expected: 401),
            Call(operation: "PUT /v1/users/{userId}/consent", uri: "/v1/users/alice/consent", headers: service, body: "{}", expected: 400),
            Call(
                operation: "POST /v1/users/{userId}/grants", uri: "/v1/users/alice/grants", headers: service,
                body: #"{"entitlement":"vip","until":"\#(grantUntil)","reason":"openapi","idempotencyKey":"k1"}"#, expected: 201),
            Call(
                operation: "POST /v1/users/{userId}/grants", uri: "/v1/users/alice/grants", headers: service,
                body: #"{"entitlement":"vip","until":"\#(grantUntil)","reason":"openapi","idempotencyKey":"k1"}"#, expected: 200),
            Call(
                operation: "POST /v1/users/{userId}/grants", uri: "/v1/users/alice/grants", headers: service,
                body: #"{"entitlement":"gold","until":"\#(grantUntil)","reason":"openapi"}"#, expected: 422),
            Call(
                operation: "POST /v1/users/{userId}/grants", uri: "/v1/users/alice/grants", headers: service,
                body: #"{"entitlement":"vip","until":"yesterday","reason":"openapi"}"#, expected: 400),
            Call(
                operation: "POST /v1/users/{userId}/grants", uri: "/v1/users/alice/grants", headers: alice,
                body: #"{"entitlement":"vip","until":"\#(grantUntil)","reason":"openapi"}"#, expected: 403),
            Call(
                operation: "POST /v1/users/{userId}/grants", uri: "/v1/users/alice/grants",
                body: #"{"entitlement":"vip","until":"\#(grantUntil)","reason":"openapi"}"#, expected: 401),
            Call(
                operation: "DELETE /v1/users/{userId}/grants/{grantId}", uri: "/v1/users/alice/grants/g_none", headers: service,
                expected: 404),
            Call(
                operation: "DELETE /v1/users/{userId}/grants/{grantId}", uri: "/v1/users/alice/grants/g_none", headers: alice,
                expected: 403),
            Call(operation: "DELETE /v1/users/{userId}/grants/{grantId}", uri: "/v1/users/alice/grants/g_none", expected: 401),
            // spender holds 10 coins (set by the test), bob none.
            Call(
                operation: "POST /v1/users/{userId}/coins/spend", uri: "/v1/users/spender/coins/spend", headers: service,
                body: #"{"amount":5,"reason":"openapi","idempotencyKey":"o1"}"#, expected: 200),
            Call(
                operation: "POST /v1/users/{userId}/coins/spend", uri: "/v1/users/spender/coins/spend", headers: service,
                body: #"{"amount":6,"reason":"openapi","idempotencyKey":"o1"}"#, expected: 409),
            Call(
                operation: "POST /v1/users/{userId}/coins/spend", uri: "/v1/users/bob/coins/spend", headers: service,
                body: #"{"amount":5,"reason":"openapi","idempotencyKey":"o2"}"#, expected: 409),
            Call(
                operation: "POST /v1/users/{userId}/coins/spend", uri: "/v1/users/bob/coins/spend", headers: service,
                body: #"{"amount":0,"reason":"openapi","idempotencyKey":"o3"}"#, expected: 400),
            Call(
                operation: "POST /v1/users/{userId}/coins/spend", uri: "/v1/users/bob/coins/spend", headers: service,
                body: #"{"amount":1,"reason":"\#(String(repeating: "x", count: 5000))","idempotencyKey":"o4"}"#, expected: 413),
            Call(
                operation: "POST /v1/users/{userId}/coins/spend", uri: "/v1/users/bob/coins/spend", headers: alice,
                body: #"{"amount":1,"reason":"openapi","idempotencyKey":"o5"}"#, expected: 403),
            Call(
                operation: "POST /v1/users/{userId}/coins/spend", uri: "/v1/users/bob/coins/spend",
                body: #"{"amount":1,"reason":"openapi","idempotencyKey":"o6"}"#, expected: 401),
            Call(
                operation: "POST /v1/users/{userId}/coins/spend", uri: "/v1/users/bob/coins/spend", headers: service,
                body: #"{"amount":1,"reason":"openapi","idempotencyKey":"o7","allowSandbox":true}"#, expected: 409),
            Call(
                operation: "PUT /v1/admin/testers/{userId}", uri: "/v1/admin/testers/bob", headers: service,
                body: #"{"until":"\#(grantUntil)","reason":"openapi"}"#, expected: 200),
            Call(
                operation: "PUT /v1/admin/testers/{userId}", uri: "/v1/admin/testers/bob", headers: service,
                body: #"{"until":"yesterday"}"#, expected: 400),
            Call(operation: "PUT /v1/admin/testers/{userId}", uri: "/v1/admin/testers/bob", headers: alice, expected: 403),
            Call(operation: "PUT /v1/admin/testers/{userId}", uri: "/v1/admin/testers/bob", expected: 401),
            Call(operation: "GET /v1/admin/testers", uri: "/v1/admin/testers", headers: service, expected: 200),
            Call(operation: "GET /v1/admin/testers", uri: "/v1/admin/testers", expected: 401),
            Call(operation: "DELETE /v1/admin/testers/{userId}", uri: "/v1/admin/testers/bob", headers: service, expected: 200),
            Call(operation: "DELETE /v1/admin/testers/{userId}", uri: "/v1/admin/testers/bob", headers: service, expected: 404),
            Call(operation: "DELETE /v1/admin/testers/{userId}", uri: "/v1/admin/testers/bob", expected: 401),
        ]
    }

    /// Every verification failure code a job's status can carry is listed in the document (issue 29: each new
    /// refusal's stable code), and each has its own sentence for the app.
    @Test func everyVerificationFailureCodeIsDocumented() throws {
        let document = String(decoding: try Data(contentsOf: Self.sourceFile), as: UTF8.self)
        let source = try String(
            contentsOf: Vectors.repositoryRoot.appendingPathComponent("Shared/AppStore/Verification/FailureCode.swift"), encoding: .utf8)
        let codes = source.matches(of: try Regex(#"FailureCode = "([a-z_0-9]+)""#)).compactMap { $0.output[1].substring.map(String.init) }
        #expect(codes.count >= 30)
        for code in codes {
            #expect(document.contains(code), "\(code) is not in openapi.yaml")
            #expect(FailureCode(rawValue: code).sentence != FailureCode(rawValue: "no_such_code").sentence, "\(code) has no sentence")
        }
    }

    @Test func theDocumentIsServedAndMatchesTheRoutesAndEveryOperationAnswersAsDocumented() async throws {
        let file = try Data(contentsOf: Self.sourceFile)
        let document = Document(yaml: String(decoding: file, as: UTF8.self))
        #expect(document.operations.count >= 12, "\(document.operations.keys.sorted())")
        #expect(document.errorCodes == (try Self.ingestErrorCodes()))

        let offerKey = try OfferSigningKey(
            keyId: "OFFERKEY42", issuerId: "57246542-96fe-1a63-e053-0824d011072a", bundleId: "com.example.app",
            privateKeyPEM: P256.Signing.PrivateKey().pemRepresentation)
        try await withRedisServer { server in
            var configuration = try IngestHarness.configuration(server)
            configuration.offerKey = offerKey
            configuration.catalog = try Catalog(products: [
                Product(productId: "com.example.coins100", type: .consumable, coins: 100),
                Product(
                    productId: "com.example.vip.month", type: .autoRenewable, entitlement: "vip",
                    offers: ["winback50", PromotionalOffer(id: "upsell", eligibility: .active)],
                    introductoryOfferEligibility: true),
            ])
            let router = Router(context: BasicRequestContext.self)
            let app = try await App.build(configuration: configuration, logger: testLogger, router: router)
            let registered = Set(router.routes.map { "\($0.method.rawValue) \($0.path)" })
            #expect(registered == Set(document.operations.keys))

            try await app.test(.router) { client in
                let alice = try await IngestHarness.userHeaders("alice")
                let served = try await client.execute(uri: "/openapi.yaml", method: .get)
                #expect(served.status == .ok)
                #expect(Data(served.body.readableBytesView) == file)

                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                _ = try await redis.send("HSET", Keys(prefix: "tg").account(user: "spender"), "coins", "10")
                let receipt = try await client.execute(
                    uri: "/v1/receipts", method: .post, headers: alice, body: ByteBuffer(string: #"{"receipt":"b3BlbmFwaQ=="}"#))
                let jobId = try #require(IngestHarness.json(receipt)["jobId"]?.string)
                let calls = try Self.calls(
                    alice: alice, bob: try await IngestHarness.userHeaders("bob"), service: try IngestHarness.apiKeyHeaders(),
                    jobId: jobId)
                #expect(Set(calls.map(\.operation)) == Set(document.operations.keys))
                for call in calls {
                    let method = HTTPRequest.Method(String(call.operation.prefix { $0 != " " })) ?? .get
                    let response = try await client.execute(
                        uri: call.uri, method: method, headers: call.headers, body: call.body.map { ByteBuffer(string: $0) })
                    let status = Int(response.status.code)
                    #expect(status == call.expected, "\(call.operation) \(call.uri): \(status) \(IngestHarness.json(response))")
                    #expect(document.operations[call.operation]?.contains(status) == true, "\(call.operation) does not document \(status)")
                    if status >= 400 {
                        let code = IngestHarness.errorCode(response)
                        #expect(code.map { document.errorCodes.contains($0) } == true, "\(call.operation): code \(code ?? "none")")
                    }
                }
            }
        }
    }
}
