import AppStore
import Crypto
import Foundation

/// A user token as the app's own auth server issues it: an HS256 JWT with `sub` = the user id and `exp`.
enum UserToken {
    static func make(user: String, secret: String = SystemHarness.clientJWTSecret, lifetime: TimeInterval = 3600) -> String {
        let header = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8))
        let claims: [String: Any] = ["sub": user, "exp": Int(Date().timeIntervalSince1970 + lifetime)]
        let json = (try? JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys])) ?? Data()
        let signingInput = header + "." + Base64URL.encode(Array(json))
        let mac = HMAC<SHA256>.authenticationCode(for: Data(signingInput.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return signingInput + "." + Base64URL.encode(Array(mac))
    }

    /// A fresh user id for one test (ingest's rules: no `{`, `}`, `:` or spaces).
    static func newUser(_ label: String) -> String {
        "e2e-\(label)-\(UUID().uuidString.prefix(8).lowercased())"
    }
}
