import AppStore

/// The structure rule read the obvious way: split on dots, decode the header, read its JSON.
enum ReferenceJWSStructure {
    enum Verdict: Equatable {
        case accepted
        case invalid
        case unsupportedAlgorithm(String)
    }

    static func verdict(_ jws: String) -> Verdict {
        let segments = jws.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3, segments.allSatisfy({ !$0.isEmpty && $0.allSatisfy(JWSStructure.isBase64URL) }) else {
            return .invalid
        }
        guard let header = Base64URL.decode(String(decoding: segments[0], as: UTF8.self)),
            let fields = try? JWSHeader.read(header), let alg = fields.alg
        else { return .invalid }
        guard alg == "ES256" else { return .unsupportedAlgorithm(alg) }
        guard let chain = fields.x5c, chain.count == 3, !chain.contains(where: \.isEmpty) else { return .invalid }
        return .accepted
    }
}
