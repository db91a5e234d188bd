import AppStore
import Core
import Crypto
import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@testable import ingest

/// An app's subscription-offer key, whose private half only the app holds, and an ingest signing with it: what the
/// promotional and introductory offer tests run against. The tests get the public half.
enum OfferKeyFixture {
    static let bundleId = "com.example.offers"
    static let keyId = "OFFERKEY42"
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"

    /// Runs `body` with an ingest whose catalog is `catalog` and which signs with a fresh key (none: `signing` false),
    /// after `configure`, on `clock`.
    static func withApp(
        _ server: RedisServer, catalog: Catalog, signing: Bool = true, clock: PipelineClock = .system,
        configure more: @escaping (inout IngestConfiguration) throws -> Void = { _ in },
        _ body: @escaping @Sendable (any TestClientProtocol, P256.Signing.PublicKey) async throws -> Void
    ) async throws {
        let privateKey = P256.Signing.PrivateKey()
        let offerKey = try OfferSigningKey(
            keyId: keyId, issuerId: issuerId, bundleId: bundleId, privateKeyPEM: privateKey.pemRepresentation)
        let configure: (inout IngestConfiguration) throws -> Void = { configuration in
            configuration.catalog = catalog
            configuration.offerKey = signing ? offerKey : nil
            try more(&configuration)
        }
        try await IngestHarness.withApp(server, configure: configure, clock: clock) { client in
            try await body(client, privateKey.publicKey)
        }
    }

    /// alice's two transactions of the `vip` entitlement in the ledger; offers name the later one, `2000000222`.
    static func recordAlicesVIP(_ redis: RedisConnection) async throws {
        _ = try await redis.send(
            "HSET", Keys(prefix: "tg").entitlement(user: "alice", name: "vip"), "2000000111", "0,1700000000000,1702592000000,0",
            "2000000222", "1,1705000000000,1707592000000,0")
    }

    /// A JWS segment's JSON object.
    static func jsonSegment(_ segment: Substring) throws -> [String: JSONValue] {
        let bytes = try #require(Base64URL.decode(segment))
        return try #require(JSONValue.read(bytes)?.members)
    }
}
