import AppStore

extension FuzzTarget {
    /// AppStore's `JWSStructure`, ingest's check of every JWS strangers post (one pass over the bytes with `memchr`
    /// and a table): it accepts exactly what a plain split-and-decode reading of the same rule accepts, and refuses
    /// the rest for the same reason. An input starting with `{` is taken as the header's JSON and posted as
    /// `base64url(input).e30.c2ln`, so the fuzzer reaches the header reader without having to find base64 itself.
    static let jwsStructure = FuzzTarget(
        name: "JWSStructure", maxLength: 32768,
        summary: "AppStore JWSStructure.check: agrees with a plain split-and-decode reading"
    ) { bytes throws(FuzzFailure) in
        let jws =
            bytes.first == UInt8(ascii: "{")
            ? Base64URL.encode(bytes) + ".e30.c2ln" : String(decoding: bytes, as: UTF8.self)
        let verdict: ReferenceJWSStructure.Verdict
        do throws(JWSStructureError) {
            try JWSStructure.check(jws)
            verdict = .accepted
        } catch {
            switch error {
            case .invalidJWS: verdict = .invalid
            case .unsupportedAlgorithm(let alg): verdict = .unsupportedAlgorithm(alg)
            }
        }
        let expected = ReferenceJWSStructure.verdict(jws)
        try expect(verdict == expected, "JWSStructure says \(verdict), the plain reading \(expected)")
    }
}
