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

/// `POST /v1/offers/introductory`: eligibility is only ever taken away (a user the ledger knows bought the product's
/// entitlement gets a signed `allowIntroductoryOffer: false`), never granted beyond Apple's own rule.
@Suite struct IntroductoryOfferTests {
    let month = "com.example.vip.month"
    let bundleId = OfferKeyFixture.bundleId
    let keyId = OfferKeyFixture.keyId
    let issuerId = OfferKeyFixture.issuerId

    func withOfferApp(
        _ server: RedisServer, signing: Bool = true,
        _ body: @escaping @Sendable (any TestClientProtocol, P256.Signing.PublicKey) async throws -> Void
    ) async throws {
        let catalog = try Catalog(products: [
            Product(productId: "com.example.coins100", type: .consumable, coins: 100),
            Product(productId: month, type: .autoRenewable, entitlement: "vip", introductoryOfferEligibility: true),
            Product(productId: "com.example.vip.year", type: .autoRenewable, entitlement: "vip"),
        ])
        try await OfferKeyFixture.withApp(server, catalog: catalog, signing: signing, body)
    }

    func post(_ client: any TestClientProtocol, _ json: String, headers: HTTPFields) async throws -> TestResponse {
        try await client.execute(uri: "/v1/offers/introductory", method: .post, headers: headers, body: ByteBuffer(string: json))
    }

    @Test func aUserWhoBoughtTheEntitlementIsSignedIneligibleAndANewOneIsLeftToApple() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            // alice had vip under some Apple ID: two transactions, the later one is named.
            try await OfferKeyFixture.recordAlicesVIP(redis)
            try await withOfferApp(server) { client, publicKey in
                let before = Int64(Date().timeIntervalSince1970)
                let response = try await post(
                    client, #"{"productId":"\#(month)","allowIntroductoryOffer":true}"#,
                    headers: try await IngestHarness.userHeaders("alice"))
                #expect(response.status == .ok)
                let json = IngestHarness.json(response)
                #expect(json["allowIntroductoryOffer"]?.bool == false)
                #expect(json["transactionId"]?.string == "2000000222")
                let jws = try #require(json["signature"]?.string)
                let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
                try #require(parts.count == 3)
                let header = try OfferKeyFixture.jsonSegment(parts[0])
                #expect(header["alg"]?.string == "ES256" && header["kid"]?.string == keyId)
                let claims = try OfferKeyFixture.jsonSegment(parts[1])
                #expect(claims["aud"]?.string == "introductory-offer-eligibility")
                #expect(claims["bid"]?.string == bundleId)
                #expect(claims["iss"]?.string == issuerId)
                #expect(claims["productId"]?.string == month)
                #expect(claims["allowIntroductoryOffer"]?.bool == false)
                #expect(claims["transactionId"]?.string == "2000000222")
                #expect(UUID(uuidString: claims["nonce"]?.string ?? "") != nil)
                #expect(Int64(claims["iat"]?.int ?? 0) >= before)
                #expect(Set(claims.keys) == ["iss", "bid", "aud", "iat", "nonce", "productId", "allowIntroductoryOffer", "transactionId"])
                let raw = try #require(Base64URL.decode(parts[2]))
                let signature = try P256.Signing.ECDSASignature(rawRepresentation: raw)
                #expect(publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))

                // bob never bought vip: nothing is signed, Apple's own rule decides (the request cannot ask for true).
                let bob = try await post(
                    client, #"{"productId":"\#(month)","allowIntroductoryOffer":true}"#, headers: try await IngestHarness.userHeaders("bob")
                )
                #expect(bob.status == .ok)
                let answer = IngestHarness.json(bob)
                #expect(answer["signature"] == .null)
                #expect(answer["allowIntroductoryOffer"] == .null)
                #expect(answer["reason"]?.string == "apple_decides")
            }
        }
    }

    @Test func onlyMarkedProductsOfAuthenticatedUsersWithAKeyAreAnswered() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            try await withOfferApp(server) { client, _ in
                let alice = try await IngestHarness.userHeaders("alice")
                let cases: [(String, HTTPResponse.Status, String)] = [
                    (#"{"productId":"com.example.vip.year"}"#, .unprocessableContent, "introductory_offer_not_listed"),
                    (#"{"productId":"com.example.coins100"}"#, .unprocessableContent, "introductory_offer_not_listed"),
                    (#"{"productId":"com.example.unknown"}"#, .unprocessableContent, "unknown_product"),
                    ("{}", .badRequest, "invalid_request"),
                    ("nope", .badRequest, "invalid_json"),
                ]
                for (body, status, code) in cases {
                    let response = try await post(client, body, headers: alice)
                    #expect(response.status == status, "\(body)")
                    #expect(IngestHarness.errorCode(response) == code, "\(body)")
                }
                let anonymous = try await post(client, #"{"productId":"\#(month)"}"#, headers: [:])
                #expect(anonymous.status == .unauthorized)
                let service = try await post(client, #"{"productId":"\#(month)"}"#, headers: try IngestHarness.apiKeyHeaders())
                #expect(service.status == .forbidden)
            }
            #expect(try await IngestHarness.dbsize(redis) == 0)
            try await withOfferApp(server, signing: false) { client, _ in
                let response = try await post(client, #"{"productId":"\#(month)"}"#, headers: try await IngestHarness.userHeaders("alice"))
                #expect(response.status == .notImplemented)
                #expect(IngestHarness.errorCode(response) == "offers_not_configured")
            }
        }
    }

    @Test func theCatalogMarksOnlySubscriptions() {
        #expect(throws: LedgerError.self) {
            _ = try Catalog(
                json: Array(#"{"products":[{"productId":"c","type":"consumable","coins":5,"introductoryOfferEligibility":true}]}"#.utf8))
        }
        let catalog = try? Catalog(
            json: Array(
                #"{"products":[{"productId":"m","type":"autoRenewable","entitlement":"vip","introductoryOfferEligibility":true}]}"#.utf8))
        #expect(catalog?.product("m")?.signsIntroductoryOfferEligibility == true)
    }
}
