import AppStore
import Core
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import JWTKit
import Pipeline

/// Authenticates requests: `Authorization: Bearer <HS256 user JWT>` or a service API key
/// (`Authorization: Bearer <key>` or `X-Api-Key: <key>`), compared in constant time.
///
/// Only HS256 tokens are accepted (the header's `alg` is checked before anything else, so `none` or an
/// asymmetric algorithm never reaches a key). Without a configured secret, no user token is valid. A token must
/// also be current (`exp`, and `nbf` when present), live no longer than the deployment allows, carry the configured
/// issuer and audience when those are set, and name a usable user id (``UserID``).
///
/// Each project (docs/PROJECTS.md) has its own secret: a token is tried against each, and the user is of the project
/// whose secret signed it (``AppUser``), never of one the token or the request names. Secrets are distinct (the apps
/// file refuses a shared one), so at most one verifies a token.
///
/// Every refusal (`401`, and a service route's `403`) goes to ``RefusalLog`` when one is given: rate-limited, never
/// the key or token (issue 42, item 12).
struct Authenticator: Sendable {
    /// The deployment's rules for user tokens beyond the signature.
    struct TokenRules: Sendable {
        /// `iss` must equal this (`TOLLGATE_CLIENT_JWT_ISSUER`); nil: not checked.
        var issuer: String?
        /// `aud` must contain this (`TOLLGATE_CLIENT_JWT_AUDIENCE`); nil: not checked.
        var audience: String?
        /// The longest a token may live: `exp` at most this far ahead, and `exp − iat` at most this
        /// (`TOLLGATE_CLIENT_JWT_MAX_LIFETIME`).
        var maxLifetime: Duration = .seconds(86_400)
    }

    /// Each project's key, the default project first when it has a secret.
    private let keys: [(project: ProjectID, keys: JWTKeyCollection)]
    private let rules: TokenRules
    /// SHA-256 digests of the service keys, compared in constant time, and who each key is.
    private let serviceKeyDigests: [(digest: [UInt8], caller: ServiceCaller)]
    private static let apiKeyHeader = HTTPField.Name("X-Api-Key")
    private let refusals: RefusalLog?

    /// `clientJWTSecret` is the default project's; `projectSecrets` the other projects'.
    init(
        clientJWTSecret: String?, projectSecrets: [(ProjectID, String)] = [], serviceKeys: [ServiceKey],
        rules: TokenRules = TokenRules(), refusals: RefusalLog? = nil
    ) async {
        (self.rules, self.refusals) = (rules, refusals)
        var all: [(project: ProjectID, keys: JWTKeyCollection)] = []
        for (project, secret) in (clientJWTSecret.map { [(ProjectID.default, $0)] } ?? []) + projectSecrets {
            let keys = JWTKeyCollection()
            await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
            all.append((project, keys))
        }
        keys = all
        serviceKeyDigests = serviceKeys.map {
            (Array(SHA256.hash(data: Data($0.key.utf8))), ServiceCaller(name: $0.name, scopes: $0.scopes, project: $0.project))
        }
    }

    /// The caller, or `401 unauthorized` (logged by ``RefusalLog``: for an unknown `X-Api-Key`, with its hint).
    func authenticate(_ request: Request) async throws(IngestError) -> Principal {
        do {
            return try await identify(request)
        } catch {
            let apiKey = Self.apiKeyHeader.flatMap { request.headers[$0] }
            let hint = apiKey.flatMap { request.headers[.authorization] == nil ? RefusalLog.hint(unknownKey: $0) : nil }
            refusals?.record(reason: error.message, key: hint)
            throw error
        }
    }

    private func identify(_ request: Request) async throws(IngestError) -> Principal {
        let apiKey = Self.apiKeyHeader.flatMap { request.headers[$0] }
        var bearer: String?
        if let authorization = request.headers[.authorization] {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "bearer" else {
                throw .unauthorized("Authorization must be 'Bearer <token>'")
            }
            bearer = Self.trimmingBlanks(parts[1])
        }
        if let key = apiKey ?? bearer, let caller = serviceCaller(key) { return .service(caller) }
        if apiKey != nil, bearer == nil { throw .unauthorized("unknown API key") }
        guard let token = bearer else { throw .unauthorized() }
        let user = try await verifyUserToken(token)
        return .user(user.id, project: user.project)
    }

    /// Authenticates and requires an app user (services cannot submit on someone's behalf).
    func user(_ request: Request) async throws(IngestError) -> AppUser {
        switch try await authenticate(request) {
        case .user(let id, let project): return AppUser(id: id, project: project)
        case .service: throw .forbidden("this endpoint is for app users")
        }
    }

    /// Authenticates and requires a service key holding `scope`: `401` without a known key, `403 forbidden` for a
    /// user's token (no user reaches a service endpoint), `403 missing_scope` for a key without the scope.
    func service(_ request: Request, scope: ServiceKey.Scope) async throws(IngestError) -> ServiceCaller {
        switch try await authenticate(request) {
        case .user:
            let refusal = IngestError.forbidden("this endpoint is for the app's backend (a service key)")
            refusals?.record(reason: refusal.message)
            throw refusal
        case .service(let caller):
            guard caller.may(scope) else {
                let refusal = IngestError.missingScope(scope.rawValue, key: caller.name)
                refusals?.record(reason: refusal.message, key: caller.name)
                throw refusal
            }
            return caller
        }
    }

    /// As ``service(_:scope:)``, for an endpoint any of `scopes` opens (`403 missing_scope` names the first).
    func service(_ request: Request, anyOf scopes: [ServiceKey.Scope]) async throws(IngestError) -> ServiceCaller {
        switch try await authenticate(request) {
        case .user: throw .forbidden("this endpoint is for the app's backend (a service key)")
        case .service(let caller):
            guard caller.mayAny(scopes) else {
                throw .missingScope(scopes.map(\.rawValue).joined(separator: " or "), key: caller.name)
            }
            return caller
        }
    }

    private func verifyUserToken(_ token: String) async throws(IngestError) -> AppUser {
        guard !keys.isEmpty else { throw .unauthorized("user tokens are not accepted (no client JWT secret configured)") }
        let segments = token.split(separator: ".", omittingEmptySubsequences: false)
        // Trailing padding on the header stays tolerated, as when it was decoded with Foundation; jwt-kit decides on
        // the token itself below.
        var headerSegment = segments.first.map { Array($0.utf8) } ?? []
        while headerSegment.last == UInt8(ascii: "=") { headerSegment.removeLast() }
        guard segments.count == 3, let header = headerSegment.withUnsafeBufferPointer({ Base64URL.decode($0) }),
            case .object(let members)? = try? JSONReader.parse(header), members["alg"] == .string("HS256")
        else {
            throw .unauthorized("the token must be an HS256 JWT")
        }
        var signed: (project: ProjectID, claims: UserClaims)?
        for candidate in keys {
            if let claims = try? await candidate.keys.verify(token, as: UserClaims.self) {
                signed = (candidate.project, claims)
                break
            }
        }
        guard let (project, claims) = signed else { throw .unauthorized("the token is invalid or expired") }
        try check(claims)
        let subject = claims.sub.value
        guard UserID.isValid(subject) else {
            throw .unauthorized("the token's sub is not a usable user id (1-128 letters, digits, '-', '_', '.', '@')")
        }
        return AppUser(id: subject, project: project)
    }

    /// The deployment's rules: issuer, audience, lifetime.
    private func check(_ claims: UserClaims) throws(IngestError) {
        if let issuer = rules.issuer, claims.iss?.value != issuer {
            throw .unauthorized("the token's issuer is not accepted")
        }
        if let audience = rules.audience, !(claims.aud?.value.contains(audience) ?? false) {
            throw .unauthorized("the token is not meant for this audience")
        }
        let lifetime = Double(rules.maxLifetime.components.seconds)
        if claims.exp.value.timeIntervalSinceNow > lifetime + UserClaims.leewaySeconds {
            throw .unauthorized("the token lives longer than allowed")
        }
        if let issued = claims.iat?.value, claims.exp.value.timeIntervalSince(issued) > lifetime {
            throw .unauthorized("the token lives longer than allowed")
        }
    }

    /// `text` without leading and trailing spaces and tabs, trimmed on its UTF-8 bytes. Foundation's
    /// `trimmingCharacters(in:)` goes through NSString on Linux (2 % of ingest's CPU per purchase), and trimming
    /// `Character`s through `reversed()` went through unspecialized generic code (9 %).
    static func trimmingBlanks(_ text: Substring) -> String {
        let bytes = text.utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        while start < end, isBlank(bytes[start]) { bytes.formIndex(after: &start) }
        while end > start, isBlank(bytes[bytes.index(before: end)]) { bytes.formIndex(before: &end) }
        return String(Substring(bytes[start..<end]))
    }

    /// The caller whose key this is; every digest is compared (constant time in which one matched).
    private func serviceCaller(_ key: String) -> ServiceCaller? {
        let digest = Array(SHA256.hash(data: Data(key.utf8)))
        var match: ServiceCaller?
        for candidate in serviceKeyDigests {
            var difference: UInt8 = 0
            for (a, b) in zip(digest, candidate.digest) { difference |= a ^ b }
            if difference == 0 { match = candidate.caller }
        }
        return match
    }
}
