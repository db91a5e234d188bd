/// The protected header of an App Store JWS: the algorithm and the certificate chain (`x5c`, standard
/// base64 DER, leaf first).
public struct JWSHeader: Codable, Sendable, Hashable {
    public var alg: String?
    public var x5c: [String]?

    public init(alg: String?, x5c: [String]?) {
        self.alg = alg
        self.x5c = x5c
    }
}
