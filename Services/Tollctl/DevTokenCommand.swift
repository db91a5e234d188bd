import ArgumentParser
import Core
import Foundation
import JWTKit
import Pipeline

/// `tollctl dev token USER [--ttl SECONDS]`: prints a user token ingest accepts — HS256 with
/// `TOLLGATE_CLIENT_JWT_SECRET`, `sub` = USER, `iat` now, `exp` after the TTL, and `iss`/`aud` when
/// `TOLLGATE_CLIENT_JWT_ISSUER`/`TOLLGATE_CLIENT_JWT_AUDIENCE` are set — read with ingest's rules (a secret of at
/// least 32 bytes, a TTL within `TOLLGATE_CLIENT_JWT_MAX_LIFETIME`). Refused unless `TOLLGATE_ENVIRONMENT` is
/// `sandbox`: production tokens come from the app's own sign-in, never from an operator's shell.
struct DevTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token", abstract: "Mint a user JWT for ingest (sandbox only).")

    /// The claims ingest's `UserClaims` reads.
    struct Claims: JWTPayload {
        var sub: SubjectClaim
        var exp: ExpirationClaim
        var iat: IssuedAtClaim
        var iss: IssuerClaim?
        var aud: AudienceClaim?

        func verify(using algorithm: some JWTAlgorithm) async throws {}
    }

    @Argument(help: "The user id (1-128 letters, digits, '-', '_', '.', '@').")
    var user: String

    @Option(help: "Seconds until the token expires (at most TOLLGATE_CLIENT_JWT_MAX_LIFETIME).")
    var ttl: Int = 3600

    func validate() throws {
        guard UserID.isValid(user) else { throw ValidationError("USER must be 1-128 letters, digits, '-', '_', '.', '@'") }
        guard ttl > 0 else { throw ValidationError("--ttl must be a positive number of seconds") }
    }

    func run() async throws {
        print(try await Self.mint(user: user, ttl: ttl, environment: ProcessInfo.processInfo.environment, now: Date()))
    }

    /// The token, or a ``ToolError`` naming what refused it.
    static func mint(user: String, ttl: Int, environment: [String: String], now: Date) async throws -> String {
        let reader = EnvironmentReader(environment)
        let deployment = reader.optional("TOLLGATE_ENVIRONMENT")
        guard deployment?.lowercased() == "sandbox" else {
            throw ToolError(
                "not_sandbox",
                "dev token mints user tokens only when TOLLGATE_ENVIRONMENT=sandbox (it is \(deployment.map { "'\($0)'" } ?? "unset"))")
        }
        let secret = try reader.required("TOLLGATE_CLIENT_JWT_SECRET", "to sign user tokens")
        guard secret.utf8.count >= 32 else {
            throw ConfigurationError(variable: "TOLLGATE_CLIENT_JWT_SECRET", problem: "must be at least 32 bytes (HS256)")
        }
        let maxLifetime = try reader.duration("TOLLGATE_CLIENT_JWT_MAX_LIFETIME", default: .seconds(86_400), minimum: .seconds(60))
        guard Int64(ttl) <= maxLifetime.components.seconds else {
            throw ToolError(
                "invalid_ttl", "--ttl \(ttl) is longer than TOLLGATE_CLIENT_JWT_MAX_LIFETIME (\(maxLifetime.components.seconds) s)")
        }
        let issued = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let claims = Claims(
            sub: .init(value: user), exp: .init(value: issued.addingTimeInterval(Double(ttl))), iat: .init(value: issued),
            iss: reader.optional("TOLLGATE_CLIENT_JWT_ISSUER").map { .init(value: $0) },
            aud: reader.optional("TOLLGATE_CLIENT_JWT_AUDIENCE").map { .init(value: [$0]) })
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        return try await keys.sign(claims)
    }
}
