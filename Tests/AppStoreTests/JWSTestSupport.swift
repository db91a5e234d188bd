import AppStore
import AppStoreTesting
@preconcurrency import Crypto
import Foundation
import TestSupport
import X509

/// Paths and helpers shared by the JWS, chain cache and tollctl tests.
enum JWSTestSupport {
    /// `Tests/Fixtures/apple-real`.
    static let appleVectors = Vectors.appleReal

    static var appleRootDER: Data {
        get throws { try Data(contentsOf: appleVectors.appendingPathComponent("apple-root-ca-g3.der")) }
    }

    static func vector(_ name: String) throws -> String {
        String(decoding: try Data(contentsOf: appleVectors.appendingPathComponent(name)), as: UTF8.self)
    }

    static let bundleId = "com.example.tollgate"
    static let appAppleId: Int64 = 1_234_567_890

    static func nowMilliseconds(_ date: Date = Date()) -> Int64 {
        Int64(date.timeIntervalSince1970 * 1000)
    }

    /// A verifier that trusts `roots`.
    static func verifier(
        roots: [Data], bundleId: String? = bundleId, environment: AppStoreEnvironment? = .sandbox,
        appAppleId: Int64? = appAppleId, cacheCapacity: Int = 64, now: @escaping @Sendable () -> Date = { Date() }
    ) throws -> SignedDataVerifier {
        try SignedDataVerifier(
            configuration: SignedDataVerifierConfiguration(
                rootCertificates: roots, bundleId: bundleId, environment: environment, appAppleId: appAppleId,
                allowsMissingAppAppleId: true, chainCacheCapacity: cacheCapacity
            ), now: now)
    }

    /// A consumable purchase for the test app.
    static func transaction(
        id: String = "1000000000000001", bundleId: String = bundleId,
        environment: AppStoreEnvironment = .sandbox, signedDate: Int64 = nowMilliseconds()
    ) -> JWSTransactionDecodedPayload {
        JWSTransactionDecodedPayload(
            originalTransactionId: id, transactionId: id, bundleId: bundleId, productId: "com.example.coins100",
            purchaseDate: signedDate - 1000, originalPurchaseDate: signedDate - 1000, quantity: 1,
            type: .consumable, inAppOwnershipType: .purchased, signedDate: signedDate,
            environment: environment, transactionReason: .purchase
        )
    }

    /// A notification carrying `signedTransactionInfo`.
    static func notification(
        signedTransactionInfo: String?, signedRenewalInfo: String? = nil, bundleId: String = bundleId,
        environment: AppStoreEnvironment = .sandbox, appAppleId: Int64? = appAppleId,
        signedDate: Int64 = nowMilliseconds()
    ) -> ResponseBodyV2DecodedPayload {
        ResponseBodyV2DecodedPayload(
            notificationType: .oneTimeCharge, notificationUUID: UUID().uuidString.lowercased(),
            data: NotificationData(
                appAppleId: appAppleId, bundleId: bundleId, bundleVersion: "1", environment: environment,
                signedTransactionInfo: signedTransactionInfo, signedRenewalInfo: signedRenewalInfo
            ),
            signedDate: signedDate
        )
    }

    static func json(_ value: some Encodable) throws -> Data {
        try JSONEncoder().encode(value)
    }

    /// Replaces one segment of a compact JWS.
    static func replacingSegment(_ jws: String, index: Int, with segment: String) -> String {
        var parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        parts[index] = segment
        return parts.joined(separator: ".")
    }

    /// An HS256 token whose HMAC key is the leaf's public key: the key-confusion attack.
    static func hs256KeyConfusion(authority: TestCertificateAuthority, payload: Data) throws -> String {
        let header = JWSHeader(alg: "HS256", x5c: authority.signer().header.x5c)
        let signingInput = Base64URL.encode(try JSONEncoder().encode(header)) + "." + Base64URL.encode(payload)
        let key = SymmetricKey(data: authority.leafKey.publicKey.x963Representation)
        let mac = HMAC<SHA256>.authenticationCode(for: Data(signingInput.utf8), using: key)
        return signingInput + "." + Base64URL.encode(Data(mac))
    }

    /// The same payload signed correctly but with a DER-encoded ECDSA signature.
    static func derSignature(authority: TestCertificateAuthority, payload: Data) throws -> String {
        let signer = authority.signer()
        let signingInput = Base64URL.encode(try JSONEncoder().encode(signer.header)) + "." + Base64URL.encode(payload)
        let signature = try authority.leafKey.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.derRepresentation)
    }
}
