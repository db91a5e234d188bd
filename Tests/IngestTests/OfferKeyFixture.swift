import Crypto
import Hummingbird
import HummingbirdTesting
import Ledger
import TestSupport

@testable import ingest

/// An app's subscription-offer key, whose private half only the app holds, and an ingest signing with it: what the
/// promotional and introductory offer tests run against. The tests get the public half.
enum OfferKeyFixture {
    static let bundleId = "com.example.offers"
    static let keyId = "OFFERKEY42"
    static let issuerId = "57246542-96fe-1a63-e053-0824d011072a"

    /// Runs `body` with an ingest whose catalog is `catalog` and which signs with a fresh key (none: `signing` false).
    static func withApp(
        _ server: RedisServer, catalog: Catalog, signing: Bool = true,
        _ body: @escaping @Sendable (any TestClientProtocol, P256.Signing.PublicKey) async throws -> Void
    ) async throws {
        let privateKey = P256.Signing.PrivateKey()
        let offerKey = try OfferSigningKey(
            keyId: keyId, issuerId: issuerId, bundleId: bundleId, privateKeyPEM: privateKey.pemRepresentation)
        let configure: (inout IngestConfiguration) throws -> Void = { configuration in
            configuration.catalog = catalog
            configuration.offerKey = signing ? offerKey : nil
        }
        try await IngestHarness.withApp(server, configure: configure) { client in try await body(client, privateKey.publicKey) }
    }
}
