import Foundation
import HTTPClient
import JWTKit

/// Signs and caches the ES256 JWT for the App Store Server API (header `kid`, `typ: JWT`; claims `iss`,
/// `iat`, `exp`, `aud: appstoreconnect-v1`, `bid`). One token is reused by every call until it is within
/// the refresh margin of its expiry; concurrent callers share one signing.
actor APITokenProvider {
    static let audience = "appstoreconnect-v1"

    private let key: ES256PrivateKey
    private let keyId: String
    private let issuerId: String
    private let bundleId: String
    private let lifetime: Duration
    private let refreshMargin: Duration
    private let now: @Sendable () -> Date
    private var keys: JWTKeyCollection?
    private var cached: (token: String, expires: Date)?
    private var signing: Task<(token: String, expires: Date), any Error>?

    init(configuration: AppStoreServerAPIConfiguration, now: @escaping @Sendable () -> Date) throws(AppStoreAPIError) {
        guard (1...3600).contains(configuration.tokenLifetime.components.seconds) else {
            throw AppStoreAPIError(.invalidConfiguration, "the token lifetime must be 1 s to 60 min", isRetryable: false)
        }
        guard !configuration.keyId.isEmpty, !configuration.issuerId.isEmpty, !configuration.bundleId.isEmpty else {
            throw AppStoreAPIError(.invalidConfiguration, "the key ID, issuer ID and bundle ID must be set", isRetryable: false)
        }
        do {
            key = try ES256PrivateKey(pem: configuration.privateKeyPEM)
        } catch {
            throw AppStoreAPIError(.invalidConfiguration, "the private key is not a P-256 PEM key", isRetryable: false)
        }
        keyId = configuration.keyId
        issuerId = configuration.issuerId
        bundleId = configuration.bundleId
        lifetime = configuration.tokenLifetime
        refreshMargin = configuration.tokenRefreshMargin
        self.now = now
    }

    /// A token valid for at least the refresh margin.
    func token() async throws -> String {
        let current = now()
        if let cached, cached.expires.timeIntervalSince(current) > refreshMargin.timeInterval {
            return cached.token
        }
        if let signing {
            return try await signing.value.token
        }
        let task = Task { try await self.sign(at: current) }
        signing = task
        defer { signing = nil }
        let fresh = try await task.value
        cached = fresh
        return fresh.token
    }

    /// Forgets the cached token (after Apple refused it), so the next call signs a new one.
    func discard() {
        cached = nil
    }

    private func sign(at issued: Date) async throws -> (token: String, expires: Date) {
        let collection: JWTKeyCollection
        if let keys {
            collection = keys
        } else {
            collection = JWTKeyCollection()
            await collection.add(ecdsa: key, kid: JWKIdentifier(string: keyId))
            keys = collection
        }
        let issuedAt = Int(issued.timeIntervalSince1970)
        let expiresAt = issuedAt + Int(lifetime.components.seconds)
        let claims = APITokenClaims(iss: issuerId, iat: issuedAt, exp: expiresAt, aud: Self.audience, bid: bundleId)
        var header = JWTHeader()
        header.typ = "JWT"
        let token = try await collection.sign(claims, kid: JWKIdentifier(string: keyId), header: header)
        return (token, Date(timeIntervalSince1970: TimeInterval(expiresAt)))
    }
}
