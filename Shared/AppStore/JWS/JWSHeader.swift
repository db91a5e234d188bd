package import Core

/// The protected header of an App Store JWS: the algorithm and the certificate chain (`x5c`, standard
/// base64 DER, leaf first).
package struct JWSHeader: Codable, Sendable, Hashable {
    package var alg: String?
    package var x5c: [String]?

    package init(alg: String?, x5c: [String]?) {
        self.alg = alg
        self.x5c = x5c
    }
}

extension JWSHeader {
    /// The header from its decoded bytes, read with ``Core/JSONReader``: what ingest checks at the door and what the
    /// verifier reads before resolving the chain, one reader for both. A member of the wrong type, or one given twice,
    /// is an error.
    package static func read(_ bytes: [UInt8]) throws(JSONError) -> JWSHeader {
        let fields = try JSONFields(JSONReader.parse(bytes))
        return JWSHeader(alg: try fields.optionalString("alg"), x5c: try fields.optionalStrings("x5c"))
    }
}
