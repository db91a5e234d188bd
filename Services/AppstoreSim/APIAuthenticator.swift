import AppStore
@preconcurrency import Crypto
import Foundation

/// Checks the App Store Server API bearer token: an ES256 JWT with `aud` = `appstoreconnect-v1`, an
/// unexpired `exp` at most an hour after `iat`, and a `bid`. As Apple does, a key is valid for the apps it was
/// issued for: a `bid` that `SIM_API_KEYS` lists needs one of that app's keys (`kid`, and the signature verifying
/// with it). Any other `bid` needs `SIM_API_PUBLIC_KEY`'s signature when that is set; with neither setting, a
/// structurally valid token is enough, and with only `SIM_API_KEYS`, an unlisted `bid` is refused.
struct APIAuthenticator: Sendable {
    var publicKey: P256.Signing.PublicKey?
    var keys: [SimAPIKey] = []
    var now: @Sendable () -> Date

    private struct Header: Decodable {
        var alg: String?
        var typ: String?
        var kid: String?
    }
    private struct Claims: Decodable {
        var iss: String?
        var iat: Double?
        var exp: Double?
        var aud: Audience?
        var bid: String?
    }

    /// `aud` as a string or an array of strings.
    private enum Audience: Decodable {
        case one(String)
        case many([String])
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let one = try? container.decode(String.self) { self = .one(one) } else { self = .many(try container.decode([String].self)) }
        }
        func contains(_ value: String) -> Bool {
            switch self {
            case .one(let one): return one == value
            case .many(let many): return many.contains(value)
            }
        }
    }

    /// The token's bundle ID (`bid`), or why it is refused.
    func authenticate(_ authorization: String?) -> Result<String, APIErrorBody> {
        guard let authorization, authorization.hasPrefix("Bearer ") else {
            return .failure(.unauthorized("missing bearer token"))
        }
        let token = authorization.dropFirst("Bearer ".count).trimmingCharacters(in: .whitespaces)
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3,
            let headerBytes = Base64URL.decode(parts[0]), let claimBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let header = try? JSONDecoder().decode(Header.self, from: Data(headerBytes)),
            let claims = try? JSONDecoder().decode(Claims.self, from: Data(claimBytes))
        else {
            return .failure(.unauthorized("the token is not a JWT"))
        }
        guard header.alg == "ES256", signature.count == 64 else {
            return .failure(.unauthorized("the token is not ES256"))
        }
        guard claims.aud?.contains("appstoreconnect-v1") == true else {
            return .failure(.unauthorized("aud must be appstoreconnect-v1"))
        }
        let nowSeconds = now().timeIntervalSince1970
        guard let exp = claims.exp, exp > nowSeconds else { return .failure(.unauthorized("the token has expired")) }
        if let iat = claims.iat, exp - iat > 3600 { return .failure(.unauthorized("the token lives longer than an hour")) }
        guard let bid = claims.bid, !bid.isEmpty else { return .failure(.unauthorized("the token has no bid")) }
        guard claims.iss?.isEmpty == false else { return .failure(.unauthorized("the token has no iss")) }
        let signingInput = Data(token.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
        func verifies(_ key: P256.Signing.PublicKey) -> Bool {
            guard let ecdsa = try? P256.Signing.ECDSASignature(rawRepresentation: signature) else { return false }
            return key.isValidSignature(ecdsa, for: signingInput)
        }
        let appKeys = keys.filter { $0.bundleId == bid }
        if !appKeys.isEmpty {
            guard let key = appKeys.first(where: { $0.keyId == header.kid }) else {
                return .failure(.unauthorized("the token's key (kid) is not valid for \(bid)"))
            }
            guard verifies(key.publicKey) else { return .failure(.unauthorized("the token's signature does not verify")) }
        } else if let publicKey {
            guard verifies(publicKey) else { return .failure(.unauthorized("the token's signature does not verify")) }
        } else if !keys.isEmpty {
            return .failure(.unauthorized("no key is valid for \(bid)"))
        }
        return .success(bid)
    }
}
