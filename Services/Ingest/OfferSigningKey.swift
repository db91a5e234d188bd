import AppStore
package import Core
import Crypto
import Foundation

/// The app's subscription-offer key (App Store Connect, Users and Access, Integrations, In-App Purchase: a `.p8`
/// ES256 private key, separate from the App Store Server API key) and what it signs: Apple's promotional offer
/// signatures, the v2 JWS (StoreKit 2, iOS 18.4+) and the v1 signature (`SKPaymentDiscount`,
/// `Product.PurchaseOption.promotionalOffer(offerID:keyID:nonce:signature:timestamp:)`).
///
/// Read from `TOLLGATE_OFFER_KEY_ID`, `TOLLGATE_OFFER_ISSUER_ID`, `TOLLGATE_OFFER_PRIVATE_KEY_PATH` and
/// `TOLLGATE_BUNDLE_ID`. The bundle ID is this deployment's, never the caller's. Its description shows only the key
/// ID, so that the key never reaches a log.
package struct OfferSigningKey: Sendable, CustomStringConvertible {
    /// The v2 JWS's `aud`.
    static let promotionalOfferAudience = "promotional-offer"
    /// The introductory offer eligibility JWS's `aud`.
    static let introductoryOfferEligibilityAudience = "introductory-offer-eligibility"
    /// What Apple joins the v1 signature's fields with: U+2063 INVISIBLE SEPARATOR.
    static let separator = "\u{2063}"

    let keyId: String
    let issuerId: String
    let bundleId: String
    private let key: P256.Signing.PrivateKey

    /// Parses the PEM (`-----BEGIN PRIVATE KEY-----`, PKCS #8, as Apple's `.p8` files are); throws naming
    /// `TOLLGATE_OFFER_PRIVATE_KEY_PATH` when it is not a P-256 key.
    package init(keyId: String, issuerId: String, bundleId: String, privateKeyPEM: String) throws(ConfigurationError) {
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        } catch {
            throw ConfigurationError(variable: "TOLLGATE_OFFER_PRIVATE_KEY_PATH", problem: "does not hold a P-256 (ES256) PEM private key")
        }
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
    }

    package var description: String { "OfferSigningKey(keyId: \(keyId))" }

    /// The public half, for whoever verifies (tests).
    var publicKey: P256.Signing.PublicKey { key.publicKey }

    /// A promotional offer signature v2: a compact JWS, ES256, header `{"alg":"ES256","kid":<key ID>,"typ":"JWT"}`,
    /// claims `iss` (issuer ID), `bid`, `aud` = `promotional-offer`, `iat` (seconds), `nonce` (lower-case UUID),
    /// `productId`, `offerIdentifier` and, when known, `transactionId` (any transaction of the customer's).
    func promotionalOfferV2(
        productId: String, offerId: String, transactionId: String?, nonce: UUID, issuedAtSeconds: Int64
    ) throws -> String {
        try compactJWS { claims in
            claims.member("aud", Self.promotionalOfferAudience)
            claims.member("bid", bundleId)
            claims.member("iat", issuedAtSeconds)
            claims.member("iss", issuerId)
            claims.member("nonce", nonce.uuidString.lowercased())
            claims.member("offerIdentifier", offerId)
            claims.member("productId", productId)
            claims.member("transactionId", transactionId)
        }
    }

    /// An introductory offer eligibility signature (StoreKit 2, iOS 18.4+,
    /// `Product.PurchaseOption.introductoryOfferEligibility(compactJWS:)`): a compact JWS like the promotional v2
    /// one, `aud` = `introductory-offer-eligibility`, claims `productId`, `allowIntroductoryOffer` and
    /// `transactionId` (any transaction of the customer's).
    func introductoryOfferEligibility(
        productId: String, allowIntroductoryOffer: Bool, transactionId: String, nonce: UUID, issuedAtSeconds: Int64
    ) throws -> String {
        try compactJWS { claims in
            claims.member("allowIntroductoryOffer", allowIntroductoryOffer)
            claims.member("aud", Self.introductoryOfferEligibilityAudience)
            claims.member("bid", bundleId)
            claims.member("iat", issuedAtSeconds)
            claims.member("iss", issuerId)
            claims.member("nonce", nonce.uuidString.lowercased())
            claims.member("productId", productId)
            claims.member("transactionId", transactionId)
        }
    }

    /// A promotional offer signature v1: ECDSA P-256 with SHA-256 over ``v1Message(productId:offerId:applicationUsername:nonce:timestampMilliseconds:)``,
    /// DER, base64.
    func promotionalOfferV1(
        productId: String, offerId: String, applicationUsername: String, nonce: UUID, timestampMilliseconds: Int64
    ) throws -> String {
        let message = v1Message(
            productId: productId, offerId: offerId, applicationUsername: applicationUsername, nonce: nonce,
            timestampMilliseconds: timestampMilliseconds)
        return try key.signature(for: Data(message.utf8)).derRepresentation.base64EncodedString()
    }

    /// Apple's v1 payload: bundle ID, key ID, product ID, offer ID, application username (the lower-case
    /// `appAccountToken`), nonce (lower-case UUID) and timestamp (ms), joined by U+2063.
    func v1Message(
        productId: String, offerId: String, applicationUsername: String, nonce: UUID, timestampMilliseconds: Int64
    ) -> String {
        [
            bundleId, keyId, productId, offerId, applicationUsername.lowercased(), nonce.uuidString.lowercased(),
            String(timestampMilliseconds),
        ]
        .joined(separator: Self.separator)
    }

    /// `base64url(header).base64url(claims).base64url(r‖s)`, the claims' members written by `claims` in the byte
    /// order of their names (as `JSONSerialization`'s `.sortedKeys` wrote them before).
    private func compactJWS(claims: (inout JSONWriter) -> Void) throws -> String {
        var header = JSONWriter(capacity: 64)
        header.beginObject()
        header.member("alg", "ES256")
        header.member("kid", keyId)
        header.member("typ", "JWT")
        header.endObject()
        var body = JSONWriter(capacity: 384)
        body.beginObject()
        claims(&body)
        body.endObject()
        let signingInput = Base64URL.encode(header.bytes) + "." + Base64URL.encode(body.bytes)
        let signature = try key.signature(for: Data(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature.rawRepresentation)
    }
}
