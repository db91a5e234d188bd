import JWTKit

/// The claims of the JWT that authorizes App Store Server API calls.
struct APITokenClaims: JWTPayload {
    var iss: String
    var iat: Int
    var exp: Int
    var aud: String
    var bid: String

    func verify(using algorithm: some JWTAlgorithm) async throws {}
}
