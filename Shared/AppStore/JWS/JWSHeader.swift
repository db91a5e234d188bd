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
