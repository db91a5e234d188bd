import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import JWTKit

/// Authenticates requests: `Authorization: Bearer <HS256 user JWT>` or a service API key
/// (`Authorization: Bearer <key>` or `X-Api-Key: <key>`), compared in constant time.
///
/// Only HS256 tokens are accepted (the header's `alg` is checked before anything else, so `none` or an
/// asymmetric algorithm never reaches a key). Without a configured secret, no user token is valid.
struct Authenticator: Sendable {
    private let keys: JWTKeyCollection?
    /// SHA-256 digests of the service keys, compared in constant time.
    private let serviceKeyDigests: [[UInt8]]
    private static let apiKeyHeader = HTTPField.Name("X-Api-Key")

    init(clientJWTSecret: String?, serviceKeys: [String]) async {
        if let clientJWTSecret {
            let keys = JWTKeyCollection()
            await keys.add(hmac: HMACKey(from: clientJWTSecret), digestAlgorithm: .sha256)
            self.keys = keys
        } else {
            keys = nil
        }
        serviceKeyDigests = serviceKeys.map { Array(SHA256.hash(data: Data($0.utf8))) }
    }

    /// The caller, or `401 unauthorized`.
    func authenticate(_ request: Request) async throws(IngestError) -> Principal {
        let apiKey = Self.apiKeyHeader.flatMap { request.headers[$0] }
        var bearer: String?
        if let authorization = request.headers[.authorization] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                throw .unauthorized("Authorization must be 'Bearer <token>'")
            }
            bearer = parts[1].trimmingCharacters(in: .whitespaces)
        }
        if let key = apiKey ?? bearer, isServiceKey(key) { return .service }
        if apiKey != nil, bearer == nil { throw .unauthorized("unknown API key") }
        guard let token = bearer else { throw .unauthorized() }
        return .user(try await verifyUserToken(token))
    }

    /// Authenticates and requires an app user (services cannot submit on someone's behalf).
    func user(_ request: Request) async throws(IngestError) -> String {
        switch try await authenticate(request) {
        case .user(let id): return id
        case .service: throw .forbidden("this endpoint is for app users")
        }
    }

    private func verifyUserToken(_ token: String) async throws(IngestError) -> String {
        guard let keys else { throw .unauthorized("user tokens are not accepted (no client JWT secret configured)") }
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        guard segments.count == 3, let header = JWSStructure.base64URLDecode(segments[0].utf8).map({ Data($0) }),
              let object = try? JSONSerialization.jsonObject(with: header) as? [String: Any],
              object["alg"] as? String == "HS256" else {
            throw .unauthorized("the token must be an HS256 JWT")
        }
        do {
            let claims = try await keys.verify(token, as: UserClaims.self)
            let subject = claims.sub.value
            guard !subject.isEmpty, subject.utf8.count <= 128, !subject.contains(where: { "{}: ".contains($0) }) else {
                throw IngestError.unauthorized("the token's sub is not a usable user id")
            }
            return subject
        } catch let error as IngestError {
            throw error
        } catch {
            throw .unauthorized("the token is invalid or expired")
        }
    }

    private func isServiceKey(_ key: String) -> Bool {
        let digest = Array(SHA256.hash(data: Data(key.utf8)))
        var match = false
        for candidate in serviceKeyDigests {
            var difference: UInt8 = 0
            for (a, b) in zip(digest, candidate) { difference |= a ^ b }
            match = match || difference == 0
        }
        return match
    }
}
