import AppStore
@preconcurrency import Crypto
import Foundation

/// App Store Server API bearer tokens made in tests: ES256 JWTs like App Store Connect keys sign.
enum TestToken {
    static func make(
        key: P256.Signing.PrivateKey, bid: String = "com.example.app", audience: String = "appstoreconnect-v1",
        expiresIn: TimeInterval = 600
    ) throws -> String {
        let now = Date().timeIntervalSince1970
        let header = try JSONSerialization.data(withJSONObject: ["alg": "ES256", "kid": "TESTKEY123", "typ": "JWT"])
        let claims = try JSONSerialization.data(
            withJSONObject: [
                "iss": "57246542-96fe-1a63-e053-0824d011072a", "iat": Int(now), "exp": Int(now + expiresIn),
                "aud": audience, "bid": bid,
            ] as [String: Any])
        let input = Base64URL.encode(header) + "." + Base64URL.encode(claims)
        let signature = try key.signature(for: Data(input.utf8))
        return input + "." + Base64URL.encode(signature.rawRepresentation)
    }

    static func header(_ token: String) -> [String: String] { ["Authorization": "Bearer \(token)"] }
}
