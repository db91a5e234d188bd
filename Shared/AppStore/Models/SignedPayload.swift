package import Core

/// A payload Apple signs as a JWS, which says when it was signed (`signedDate`, milliseconds since 1970).
///
/// The verifier checks the certificate chain at this time in offline mode; a payload without it is
/// checked at the current time.
package protocol SignedPayload: Decodable, Sendable {
    var signedDate: Int64? { get }
}

/// A payload read by hand from the verified JSON (``Core/JSONReader``) instead of `JSONDecoder`: the verifier reads
/// one per purchase, and `Codable` cost it more than the rest of a verification but the ES256 check. It must read
/// what `JSONDecoder` reads (its tests compare the two on Apple's real vectors and on fully populated payloads).
package protocol HandDecodedPayload: SignedPayload {
    init(json fields: JSONFields) throws(JSONError)
}
