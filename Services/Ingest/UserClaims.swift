import Foundation
import JWTKit

/// The claims of a user token: `sub` (the user id) and `exp` (required), optionally `nbf`, `iat`, `iss` and `aud`.
/// `exp` and `nbf` are checked here with up to ``leewaySeconds`` of clock skew; the deployment's rules (issuer,
/// audience, longest lifetime) by ``Authenticator``.
struct UserClaims: JWTPayload {
    /// Allowed clock skew when checking `exp` and `nbf`.
    static let leewaySeconds: TimeInterval = 60

    var sub: SubjectClaim
    var exp: ExpirationClaim
    var nbf: NotBeforeClaim?
    var iat: IssuedAtClaim?
    var iss: IssuerClaim?
    var aud: AudienceClaim?

    init(
        sub: SubjectClaim, exp: ExpirationClaim, nbf: NotBeforeClaim? = nil, iat: IssuedAtClaim? = nil,
        iss: IssuerClaim? = nil, aud: AudienceClaim? = nil
    ) {
        self.sub = sub
        self.exp = exp
        self.nbf = nbf
        self.iat = iat
        self.iss = iss
        self.aud = aud
    }

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired(currentDate: Date().addingTimeInterval(-Self.leewaySeconds))
        try nbf?.verifyNotBefore(currentDate: Date().addingTimeInterval(Self.leewaySeconds))
    }
}
