import Foundation
import JWTKit

/// The claims of a user token: `sub` (the user id) and `exp` (required), checked with up to
/// ``leewaySeconds`` of clock skew.
struct UserClaims: JWTPayload {
    /// Allowed clock skew when checking `exp`.
    static let leewaySeconds: TimeInterval = 60

    var sub: SubjectClaim
    var exp: ExpirationClaim

    func verify(using algorithm: some JWTAlgorithm) async throws {
        try exp.verifyNotExpired(currentDate: Date().addingTimeInterval(-Self.leewaySeconds))
    }
}
