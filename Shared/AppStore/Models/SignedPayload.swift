/// A payload Apple signs as a JWS, which says when it was signed (`signedDate`, milliseconds since 1970).
///
/// The verifier checks the certificate chain at this time in offline mode; a payload without it is
/// checked at the current time.
package protocol SignedPayload: Decodable, Sendable {
    var signedDate: Int64? { get }
}
