/// Why a string cannot be an Apple JWS, by its structure alone (``JWSStructure``).
package enum JWSStructureError: Error, Sendable, Hashable {
    /// Not three non-empty base64url segments whose header is JSON with an `alg` and three `x5c` certificates.
    case invalidJWS(String)
    /// The header's `alg`, which is not ES256.
    case unsupportedAlgorithm(String)
}
