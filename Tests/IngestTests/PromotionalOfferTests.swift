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

/// `POST /v1/offers/promotional`: both signatures verify under the offer key's public half over exactly Apple's
/// fields, and nothing the catalog does not list, or that belongs to someone else, is ever signed.
@Suite struct PromotionalOfferTests {
    let month = "com.example.vip.month"
    let bundleId = OfferKeyFixture.bundleId
    let keyId = OfferKeyFixture.keyId
    let issuerId = OfferKeyFixture.issuerId

    /// The harness catalog plus listed offers; `com.example.vip.year` lists none.
    func catalog() throws -> Catalog {
        try Catalog(products: [
            Product(productId: "com.example.coins100", type: .consumable, coins: 100),
            Product(productId: month, type: .autoRenewable, entitlement: "vip", offers: ["winback50", "loyal3m"]),
            Product(productId: "com.example.vip.year", type: .autoRenewable, entitlement: "vip"),
        ])
    }

    /// Runs `body` with an offer key whose private half only the app holds; the test gets the public half.
    func withOfferApp(
        _ server: RedisServer, signing: Bool = true,
        _ body: @escaping @Sendable (any TestClientProtocol, P256.Signing.PublicKey) async throws -> Void
    ) async throws {
        try await OfferKeyFixture.withApp(server, catalog: try catalog(), signing: signing, body)
    }

    func post(
        _ client: any TestClientProtocol, _ json: String, headers: HTTPFields
    ) async throws -> TestResponse {
        try await client.execute(uri: "/v1/offers/promotional", method: .post, headers: headers, body: ByteBuffer(string: json))
    }

    /// `HGETALL` as a dictionary.
    func hash(_ redis: RedisConnection, _ key: String) async throws -> [String: String] {
        let items = try #require(try await redis.send("HGETALL", key).array)
        var hash: [String: String] = [:]
        for index in stride(from: 0, to: items.count - 1, by: 2) {
            if let name = items[index].string, let value = items[index + 1].string { hash[name] = value }
        }
        return hash
    }

    @Test func bothSignaturesVerifyOverApplesFieldsForAListedOffer() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            // alice owns two transactions of the vip group; the later purchase is named in the v2 JWS.
            try await OfferKeyFixture.recordAlicesVIP(redis)
            try await withOfferApp(server) { client, publicKey in
                let before = Int64(Date().timeIntervalSince1970 * 1000)
                let response = try await post(
                    client, #"{"productId":"com.example.vip.month","offerId":"winback50","bundleId":"com.evil.app"}"#,
                    headers: try await IngestHarness.userHeaders("alice"))
                let after = Int64(Date().timeIntervalSince1970 * 1000)
                #expect(response.status == .ok)
                let json = IngestHarness.json(response)
                let v1 = try #require(json["signature"])
                let nonce = try #require(v1["nonce"]?.string)
                #expect(UUID(uuidString: nonce) != nil && nonce == nonce.lowercased())
                let token = try #require(json["appAccountToken"]?.string)
                #expect(v1["applicationUsername"]?.string == token)
                #expect(token == token.lowercased() && UUID(uuidString: token) != nil)

                // v2: header, every claim, and the ES256 signature over header.claims.
                let jws = try #require(json["signatureV2"]?.string)
                let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
                try #require(parts.count == 3)
                let header = try OfferKeyFixture.jsonSegment(parts[0])
                #expect(header["alg"]?.string == "ES256")
                #expect(header["kid"]?.string == keyId)
                #expect(header["typ"]?.string == "JWT")
                #expect(header.count == 3)
                let claims = try OfferKeyFixture.jsonSegment(parts[1])
                #expect(claims["bid"]?.string == bundleId)
                #expect(claims["iss"]?.string == issuerId)
                #expect(claims["aud"]?.string == "promotional-offer")
                #expect(claims["nonce"]?.string == nonce)
                #expect(claims["productId"]?.string == month)
                #expect(claims["offerIdentifier"]?.string == "winback50")
                #expect(claims["transactionId"]?.string == "2000000222")
                let iat = Int64(try #require(claims["iat"]?.int))
                #expect((before / 1000...after / 1000).contains(iat))
                #expect(Set(claims.keys) == ["bid", "iss", "aud", "iat", "nonce", "productId", "offerIdentifier", "transactionId"])
                let rawSignature = try #require(Base64URL.decode(parts[2]))
                let v2Signature = try P256.Signing.ECDSASignature(rawRepresentation: rawSignature)
                #expect(publicKey.isValidSignature(v2Signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
                #expect(!publicKey.isValidSignature(v2Signature, for: Data("\(parts[0]).\(parts[1])x".utf8)))

                // v1: DER ECDSA P-256 SHA-256 over Apple's U+2063-joined string, built here independently.
                #expect(v1["keyIdentifier"]?.string == keyId)
                let timestamp = Int64(try #require(v1["timestamp"]?.int))
                #expect((before...after).contains(timestamp))
                let message = [bundleId, keyId, month, "winback50", token, nonce, String(timestamp)].joined(separator: "\u{2063}")
                let encoded = try #require(v1["signature"]?.string)
                let der = try #require(Data(base64Encoded: encoded))
                let v1Signature = try P256.Signing.ECDSASignature(derRepresentation: der)
                #expect(publicKey.isValidSignature(v1Signature, for: Data(message.utf8)))
                let otherBundle = message.replacingOccurrences(of: bundleId, with: "com.evil.app")
                #expect(!publicKey.isValidSignature(v1Signature, for: Data(otherBundle.utf8)))

                // The applicationUsername is a new order of alice's for this product: the purchase pays it.
                let orderNo = try #require(json["orderNo"]?.string)
                let order = Order(hash: try await hash(redis, Keys(prefix: "tg").order(user: "alice", orderNo: orderNo)))
                #expect(order?.productId == month)
                #expect(order?.appAccountToken == token)
                #expect(order?.state == .pending)
                let mapping = try await redis.send("HGET", Keys(prefix: "tg").appAccountToken(token), Order.TokenField.user)
                #expect(mapping.string == "alice")
            }
        }
    }

    @Test func anOrderNumberSignsThatOrdersTokenAndOnlyTheOwnersOrder() async throws {
        try await withRedisServer { server in
            try await withOfferApp(server) { client, _ in
                let alice = try await IngestHarness.userHeaders("alice")
                let created = try await client.execute(
                    uri: "/v1/orders", method: .post, headers: alice, body: ByteBuffer(string: #"{"productId":"\#(month)"}"#))
                let orderNo = try #require(IngestHarness.json(created)["orderNo"]?.string)
                let token = try #require(IngestHarness.json(created)["appAccountToken"]?.string)
                let body = #"{"productId":"\#(month)","offerId":"loyal3m","orderNo":"\#(orderNo)"}"#
                let own = try await post(client, body, headers: alice)
                #expect(own.status == .ok)
                #expect(IngestHarness.json(own)["orderNo"]?.string == orderNo)
                #expect(IngestHarness.json(own)["signature"]?["applicationUsername"]?.string == token)
                // bob cannot get a signature with alice's appAccountToken by naming her order.
                let bob = try await post(client, body, headers: try await IngestHarness.userHeaders("bob"))
                #expect(bob.status == .notFound)
                #expect(IngestHarness.errorCode(bob) == "unknown_order")
                #expect(IngestHarness.json(bob)["signatureV2"] == nil)
                // An order of another product is not reused for this one.
                let coins = try await client.execute(
                    uri: "/v1/orders", method: .post, headers: alice, body: ByteBuffer(string: #"{"productId":"com.example.coins100"}"#))
                let coinsOrder = try #require(IngestHarness.json(coins)["orderNo"]?.string)
                let mismatch = try await post(
                    client, #"{"productId":"\#(month)","offerId":"loyal3m","orderNo":"\#(coinsOrder)"}"#, headers: alice)
                #expect(mismatch.status == .conflict)
                #expect(IngestHarness.errorCode(mismatch) == "order_mismatch")
            }
        }
    }

    @Test func nothingTheCatalogDoesNotListIsSigned() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await withOfferApp(server) { client, _ in
                let alice = try await IngestHarness.userHeaders("alice")
                let cases: [(String, HTTPResponse.Status, String)] = [
                    (#"{"productId":"com.example.unknown","offerId":"winback50"}"#, .unprocessableContent, "unknown_product"),
                    (#"{"productId":"\#(month)","offerId":"winback99"}"#, .unprocessableContent, "unknown_offer"),
                    (#"{"productId":"\#(month)","offerId":"WINBACK50"}"#, .unprocessableContent, "unknown_offer"),
                    (#"{"productId":"com.example.vip.year","offerId":"winback50"}"#, .unprocessableContent, "unknown_offer"),
                    (#"{"productId":"com.example.coins100","offerId":"winback50"}"#, .unprocessableContent, "unknown_offer"),
                    (#"{"productId":"\#(month)"}"#, .badRequest, "invalid_request"),
                    (#"{"productId":"\#(month)","offerId":5}"#, .badRequest, "invalid_request"),
                    (#"{"productId":"\#(month)","offerId":"winback50","orderNo":"../x"}"#, .badRequest, "invalid_request"),
                    (#"["\#(month)","winback50"]"#, .badRequest, "invalid_json"),
                    ("not json", .badRequest, "invalid_json"),
                ]
                for (body, status, code) in cases {
                    let response = try await post(client, body, headers: alice)
                    #expect(response.status == status, "\(body)")
                    #expect(IngestHarness.errorCode(response) == code, "\(body)")
                    #expect(IngestHarness.json(response)["signatureV2"] == nil)
                }
            }
            // No order, no token mapping, not even a rate-limit token was written.
            #expect(try await IngestHarness.dbsize(redis) == 0)
        }
    }

    @Test func onlyAuthenticatedUsersGetSignatures() async throws {
        try await withRedisServer { server in
            try await withOfferApp(server) { client, _ in
                let body = #"{"productId":"\#(month)","offerId":"winback50"}"#
                let anonymous = try await post(client, body, headers: [:])
                #expect(anonymous.status == .unauthorized)
                #expect(IngestHarness.errorCode(anonymous) == "unauthorized")
                let forged = try await post(
                    client, body,
                    headers: IngestHarness.bearer(try await IngestHarness.token(user: "alice", secret: String(repeating: "x", count: 40))))
                #expect(forged.status == .unauthorized)
                let service = try await post(client, body, headers: try IngestHarness.apiKeyHeaders())
                #expect(service.status == .forbidden)
                #expect(IngestHarness.json(service)["signatureV2"] == nil)
            }
        }
    }

    @Test func withoutAnOfferKeyTheAnswerIsOffersNotConfigured() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await withOfferApp(server, signing: false) { client, _ in
                let response = try await post(
                    client, #"{"productId":"\#(month)","offerId":"winback50"}"#, headers: try await IngestHarness.userHeaders("alice"))
                #expect(response.status == .notImplemented)
                #expect(IngestHarness.errorCode(response) == "offers_not_configured")
                let anonymous = try await post(client, #"{"productId":"\#(month)","offerId":"winback50"}"#, headers: [:])
                #expect(anonymous.status == .unauthorized)
            }
            #expect(try await IngestHarness.dbsize(redis) == 0)
        }
    }

    @Test func everyRequestGetsAFreshNonce() async throws {
        try await withRedisServer { server in
            try await withOfferApp(server) { client, _ in
                let alice = try await IngestHarness.userHeaders("alice")
                var nonces: Set<String> = []
                var signatures: Set<String> = []
                for _ in 0..<2 {
                    let response = try await post(client, #"{"productId":"\#(month)","offerId":"winback50"}"#, headers: alice)
                    #expect(response.status == .ok)
                    let json = IngestHarness.json(response)
                    let jws = try #require(json["signatureV2"]?.string)
                    let claims = try OfferKeyFixture.jsonSegment(jws.split(separator: ".")[1])
                    nonces.insert(try #require(claims["nonce"]?.string))
                    signatures.insert(jws)
                    #expect(claims["transactionId"] == nil)  // alice owns nothing yet
                }
                #expect(nonces.count == 2)
                #expect(signatures.count == 2)
            }
        }
    }

    @Test func theOfferKeyIsConfiguredAllOrNone() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("offer-key-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyPath = directory.appendingPathComponent("SubscriptionKey_OFFERKEY42.p8").path
        try P256.Signing.PrivateKey().pemRepresentation.write(toFile: keyPath, atomically: true, encoding: .utf8)
        let notKey = directory.appendingPathComponent("not-a-key.p8").path
        try "hello".write(toFile: notKey, atomically: true, encoding: .utf8)
        let full = [
            "TOLLGATE_OFFER_KEY_ID": keyId, "TOLLGATE_OFFER_ISSUER_ID": issuerId,
            "TOLLGATE_OFFER_PRIVATE_KEY_PATH": keyPath, "TOLLGATE_BUNDLE_ID": bundleId,
        ]
        let configured = try IngestConfiguration(environment: full)
        #expect(configured.offerKey?.keyId == keyId)
        #expect(configured.offerKey?.bundleId == bundleId)
        #expect(configured.offerKey.map { "\($0)" } == "OfferSigningKey(keyId: OFFERKEY42)")
        #expect(try IngestConfiguration(environment: ["TOLLGATE_BUNDLE_ID": bundleId]).offerKey == nil)
        // The App Store Server API key is not a fallback.
        let apiKeyOnly = [
            "TOLLGATE_API_KEY_ID": "APIKEY", "TOLLGATE_API_ISSUER_ID": issuerId, "TOLLGATE_API_PRIVATE_KEY_PATH": keyPath,
            "TOLLGATE_BUNDLE_ID": bundleId,
        ]
        #expect(try IngestConfiguration(environment: apiKeyOnly).offerKey == nil)
        for (name, value) in [
            ("TOLLGATE_OFFER_KEY_ID", nil), ("TOLLGATE_OFFER_ISSUER_ID", nil), ("TOLLGATE_OFFER_PRIVATE_KEY_PATH", nil),
            ("TOLLGATE_BUNDLE_ID", nil), ("TOLLGATE_OFFER_PRIVATE_KEY_PATH", notKey),
            ("TOLLGATE_OFFER_PRIVATE_KEY_PATH", directory.appendingPathComponent("missing.p8").path),
        ] as [(String, String?)] {
            var environment = full
            environment[name] = value
            #expect {
                _ = try IngestConfiguration(environment: environment)
            } throws: { error in
                (error as? ConfigurationError)?.variable == name
            }
        }
    }
}
