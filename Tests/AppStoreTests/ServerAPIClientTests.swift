import Core
import Crypto
import Foundation
import Synchronization
import TestSupport
import Testing

@testable import AppStore

/// `AppStoreServerAPIClient` against a local stub standing in for Apple: authentication and errors.
@Suite struct ServerAPIClientTests {
    static let issuer = "57246542-96fe-1a63-e053-0824d011072a"
    static let keyId = "2X9R4HXF34"
    static let bundleId = "com.example.tollgate"

    /// A settable clock for token-expiry tests.
    final class TestClock: Sendable {
        private let state = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        var now: Date { state.withLock { $0 } }
        func advance(_ seconds: TimeInterval) { state.withLock { $0 += seconds } }
    }

    struct Harness {
        let server: StubHTTPServer
        let client: AppStoreServerAPIClient
        let key: P256.Signing.PrivateKey
        let clock: TestClock
    }

    static func withAPI(
        environment: AppStoreEnvironment = .production,
        timeout: Duration = .seconds(30),
        _ body: (Harness) async throws -> Void
    ) async throws {
        let server = try await StubHTTPServer.start()
        let key = P256.Signing.PrivateKey()
        let clock = TestClock()
        let configuration = AppStoreServerAPIConfiguration(
            issuerId: issuer, keyId: keyId, privateKeyPEM: key.pemRepresentation, bundleId: bundleId,
            environment: environment, productionURL: server.url(""), sandboxURL: server.url("/sandbox"),
            timeout: timeout)
        let client = try AppStoreServerAPIClient(configuration: configuration, now: { clock.now })
        do {
            try await body(Harness(server: server, client: client, key: key, clock: clock))
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    static func bearer(_ request: StubRecordedRequest?) throws -> String {
        let header = try #require(request?.headers["authorization"])
        #expect(header.hasPrefix("Bearer "))
        return String(header.dropFirst("Bearer ".count))
    }

    static func base64URLDecode(_ text: Substring) throws -> Data {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return try #require(Data(base64Encoded: base64))
    }

    static func jsonObject(_ data: Data) throws -> [String: JSONValue] {
        try #require(JSONValue.read(data)?.members)
    }

    static func apiError(_ body: () async throws -> Void) async -> AppStoreAPIError? {
        do {
            try await body()
            Issue.record("expected an AppStoreAPIError")
        } catch let error as AppStoreAPIError {
            return error
        } catch {
            Issue.record("expected an AppStoreAPIError, got \(error)")
        }
        return nil
    }

    @Test func tokenIsAValidES256JWTForApple() async throws {
        try await Self.withAPI { api in
            await api.server.respond(to: "/inApps/v1/transactions/2000000001", with: [.json(#"{"signedTransactionInfo": "a.b.c"}"#)])
            let info = try await api.client.getTransactionInfo(transactionId: "2000000001")
            #expect(info.signedTransactionInfo == "a.b.c")

            let request = await api.server.requests(to: "/inApps/v1/transactions/2000000001").first
            #expect(request?.method == "GET")
            let token = try Self.bearer(request)
            let parts = token.split(separator: ".", omittingEmptySubsequences: false)
            try #require(parts.count == 3)
            let header = try Self.jsonObject(Self.base64URLDecode(parts[0]))
            #expect(header["alg"]?.string == "ES256")
            #expect(header["kid"]?.string == Self.keyId)
            #expect(header["typ"]?.string == "JWT")
            let claims = try Self.jsonObject(Self.base64URLDecode(parts[1]))
            #expect(claims["iss"]?.string == Self.issuer)
            #expect(claims["aud"]?.string == "appstoreconnect-v1")
            #expect(claims["bid"]?.string == Self.bundleId)
            let issuedAt = try #require(claims["iat"]?.int)
            let expires = try #require(claims["exp"]?.int)
            #expect(issuedAt == Int(api.clock.now.timeIntervalSince1970))
            #expect(expires - issuedAt > 0 && expires - issuedAt <= 3600)

            let signature = try P256.Signing.ECDSASignature(rawRepresentation: Self.base64URLDecode(parts[2]))
            let signed = Data("\(parts[0]).\(parts[1])".utf8)
            #expect(api.key.publicKey.isValidSignature(signature, for: signed))
            #expect(!P256.Signing.PrivateKey().publicKey.isValidSignature(signature, for: signed))
        }
    }

    @Test func tokenIsReusedUntilNearExpiryThenRenewed() async throws {
        try await Self.withAPI { api in
            await api.server.respond(to: "/inApps/v1/transactions/1", with: [.json(#"{"signedTransactionInfo": "x.y.z"}"#)])
            _ = try await api.client.getTransactionInfo(transactionId: "1")
            api.clock.advance(10 * 60)
            _ = try await api.client.getTransactionInfo(transactionId: "1")
            api.clock.advance(9.5 * 60)
            _ = try await api.client.getTransactionInfo(transactionId: "1")
            let tokens = try await api.server.requests(to: "/inApps/v1/transactions/1").map(Self.bearer)
            #expect(tokens.count == 3)
            #expect(tokens[0] == tokens[1])
            #expect(tokens[2] != tokens[1])
        }
    }

    @Test func concurrentCallsShareOneToken() async throws {
        try await Self.withAPI { api in
            await api.server.respond(to: "/inApps/v1/transactions/1", with: [.json(#"{"signedTransactionInfo": "x.y.z"}"#)])
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 {
                    group.addTask { _ = try await api.client.getTransactionInfo(transactionId: "1") }
                }
                try await group.waitForAll()
            }
            let tokens = try await api.server.requests(to: "/inApps/v1/transactions/1").map(Self.bearer)
            #expect(tokens.count == 8)
            #expect(Set(tokens).count == 1)
        }
    }

    @Test func rateLimitIsRetryableWithRetryAfter() async throws {
        try await Self.withAPI { api in
            await api.server.respond(
                to: "/inApps/v1/transactions/9",
                with: [
                    .json(#"{"errorCode": 4290000, "errorMessage": "Rate limit exceeded."}"#, status: 429, headers: ["Retry-After": "7"])
                ])
            let error = await Self.apiError { _ = try await api.client.getTransactionInfo(transactionId: "9") }
            #expect(error?.code == .rateLimited)
            #expect(error?.isRetryable == true)
            #expect(error?.retryAfter == .seconds(7))
            #expect(error?.appleErrorCode == 4_290_000)
            guard case .retryable(let failure)? = error?.verificationResult(as: String.self) else {
                Issue.record("a rate limit is a retryable verification outcome")
                return
            }
            #expect(failure.code.rawValue == "api_rate_limited")
        }
    }

    @Test func serverErrorIsRetryable() async throws {
        try await Self.withAPI { api in
            await api.server.respond(
                to: "/inApps/v1/transactions/9",
                with: [
                    .json(#"{"errorCode": 5000000, "errorMessage": "An unknown error occurred."}"#, status: 500),
                    .json(#"{"errorCode": 5030000}"#, status: 503, headers: ["Retry-After": "3"]),
                ])
            let error = await Self.apiError { _ = try await api.client.getTransactionInfo(transactionId: "9") }
            #expect(error?.code == .unavailable)
            #expect(error?.isRetryable == true)
            #expect(error?.httpStatus == 500)
            #expect(error?.appleErrorCode == 5_000_000)
            #expect(error?.retryAfter == nil)
            let unavailable = await Self.apiError { _ = try await api.client.getTransactionInfo(transactionId: "9") }
            #expect(unavailable?.code == .unavailable)
            #expect(unavailable?.retryAfter == .seconds(3))
        }
    }

    @Test func badRequestCarriesApplesErrorCode() async throws {
        try await Self.withAPI { api in
            await api.server.respond(
                to: "/inApps/v1/transactions/abc",
                with: [
                    .json(#"{"errorCode": 4000006, "errorMessage": "Invalid transaction id."}"#, status: 400)
                ])
            let error = await Self.apiError { _ = try await api.client.getTransactionInfo(transactionId: "abc") }
            #expect(error?.code == .requestRejected)
            #expect(error?.isRetryable == false)
            #expect(error?.appleErrorCode == 4_000_006)
            #expect(error?.appleErrorMessage == "Invalid transaction id.")
        }
    }

    @Test func notFoundAndUnauthorizedHaveTheirOwnCodes() async throws {
        try await Self.withAPI { api in
            await api.server.respond(
                to: "/inApps/v1/transactions/404",
                with: [
                    .json(#"{"errorCode": 4040010, "errorMessage": "Transaction id not found."}"#, status: 404)
                ])
            await api.server.respond(to: "/inApps/v1/transactions/401", with: [StubResponse(status: 401)])
            let missing = await Self.apiError { _ = try await api.client.getTransactionInfo(transactionId: "404") }
            #expect(missing?.code == .notFound)
            #expect(missing?.appleErrorCode == 4_040_010)
            let refused = await Self.apiError { _ = try await api.client.getTransactionInfo(transactionId: "401") }
            #expect(refused?.code == .unauthorized)
            #expect(refused?.isRetryable == false)
            _ = await Self.apiError { _ = try await api.client.getTransactionInfo(transactionId: "401") }
            let tokens = try await api.server.requests(to: "/inApps/v1/transactions/401").map(Self.bearer)
            #expect(tokens.count == 2 && tokens[0] != tokens[1], "a refused token is not reused")
        }
    }

    /// Apple's "Errors to retry" are retryable whatever status carries them; its other 404s are not (4040008, an
    /// expired test notification token, included).
    @Test(arguments: [(4_040_002, 404), (4_040_004, 404), (4_040_006, 404), (5_000_001, 500)])
    func applesRetryableErrorCodesAreRetryable(errorCode: Int, status: Int) async throws {
        try await Self.withAPI { api in
            await api.server.respond(
                to: "/inApps/v1/transactions/7",
                with: [.json(#"{"errorCode": \#(errorCode), "errorMessage": "Please try again."}"#, status: status)])
            let error = try #require(await Self.apiError { _ = try await api.client.getTransactionInfo(transactionId: "7") })
            #expect(error.isRetryable)
            #expect(error.code == (status == 404 ? .retryLater : .unavailable))
            #expect(error.appleErrorCode == errorCode)
            guard case .retryable(let failure) = error.verificationResult(as: String.self) else {
                Issue.record("Apple's retryable error \(errorCode) is not a retryable verification outcome")
                return
            }
            #expect(failure.code.rawValue == error.code.rawValue)
        }
    }

    @Test(arguments: [4_040_001, 4_040_003, 4_040_005, 4_040_008, 4_040_010])
    func applesOtherNotFoundErrorsArePermanent(errorCode: Int) async throws {
        try await Self.withAPI { api in
            await api.server.respond(
                to: "/inApps/v1/transactions/8", with: [.json(#"{"errorCode": \#(errorCode)}"#, status: 404)])
            let error = try #require(await Self.apiError { _ = try await api.client.getTransactionInfo(transactionId: "8") })
            #expect(error.code == .notFound)
            #expect(!error.isRetryable)
        }
    }

    /// Apple's recommended hosts since May 2026 are the defaults; the older ones are only a setting away.
    @Test func defaultBaseURLsAreApplesCurrentHosts() throws {
        let configuration = AppStoreServerAPIConfiguration(
            issuerId: Self.issuer, keyId: Self.keyId, privateKeyPEM: "", bundleId: Self.bundleId, environment: .production)
        #expect(configuration.baseURL.absoluteString == "https://api.storekit.apple.com")
        var sandbox = configuration
        sandbox.environment = .sandbox
        #expect(sandbox.baseURL.absoluteString == "https://api.storekit-sandbox.apple.com")
        let older = AppStoreServerAPIConfiguration(
            issuerId: Self.issuer, keyId: Self.keyId, privateKeyPEM: "", bundleId: Self.bundleId, environment: .production,
            productionURL: try #require(URL(string: "https://api.storekit.itunes.apple.com")))
        #expect(older.baseURL.host == "api.storekit.itunes.apple.com")
    }

    @Test func slowAnswerTimesOut() async throws {
        try await Self.withAPI(timeout: .milliseconds(300)) { api in
            await api.server.respond(
                to: "/inApps/v1/transactions/1",
                with: [
                    .json(#"{"signedTransactionInfo": "x.y.z"}"#, delay: .milliseconds(1200))
                ])
            let error = await Self.apiError { _ = try await api.client.getTransactionInfo(transactionId: "1") }
            #expect(error?.code == .timeout)
            #expect(error?.isRetryable == true)
        }
    }

    @Test func sandboxEnvironmentUsesTheSandboxBaseURL() async throws {
        try await Self.withAPI(environment: .sandbox) { api in
            await api.server.respond(to: "/sandbox/inApps/v1/transactions/5", with: [.json(#"{"signedTransactionInfo": "s.a.n"}"#)])
            let info = try await api.client.getTransactionInfo(transactionId: "5")
            #expect(info.signedTransactionInfo == "s.a.n")
            #expect(await api.server.requests(to: "/inApps/v1/transactions/5").isEmpty)
        }
    }

    @Test func unusableConfigurationIsRefusedAtStartup() {
        func make(key: String, environment: AppStoreEnvironment = .production) -> AppStoreAPIError? {
            do {
                _ = try AppStoreServerAPIClient(
                    configuration: AppStoreServerAPIConfiguration(
                        issuerId: Self.issuer, keyId: Self.keyId, privateKeyPEM: key, bundleId: Self.bundleId,
                        environment: environment))
                return nil
            } catch {
                return error
            }
        }
        #expect(make(key: "not a key")?.code == .invalidConfiguration)
        #expect(make(key: P256.Signing.PrivateKey().pemRepresentation, environment: .xcode)?.code == .invalidConfiguration)
        #expect(make(key: P256.Signing.PrivateKey().pemRepresentation) == nil)
    }
}
