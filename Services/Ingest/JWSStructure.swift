import Foundation

/// Cheap structural checks of an Apple JWS (compact serialization), without verifying anything: three
/// non-empty base64url segments, a JSON header with `alg` = `ES256` and an `x5c` array of three certificates.
/// The verifier checks the signature and chain; this only refuses what can never be valid.
enum JWSStructure {
    /// Throws ``IngestError`` `invalid_jws` or `unsupported_algorithm`.
    static func check(_ jws: String) throws(IngestError) {
        let segments = jws.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3 else {
            throw .invalidJWS("a JWS has three dot-separated segments, not \(segments.count)")
        }
        guard segments.allSatisfy({ !$0.isEmpty && $0.allSatisfy(isBase64URL) }) else {
            throw .invalidJWS("every JWS segment must be non-empty base64url")
        }
        guard let headerBytes = base64URLDecode(segments[0]),
              let header = try? JSONSerialization.jsonObject(with: headerBytes) as? [String: Any] else {
            throw .invalidJWS("the JWS header is not base64url JSON")
        }
        guard let alg = header["alg"] as? String else { throw .invalidJWS("the JWS header has no alg") }
        guard alg == "ES256" else { throw .unsupportedAlgorithm(alg) }
        guard let chain = header["x5c"] as? [String], chain.count == 3, chain.allSatisfy({ !$0.isEmpty }) else {
            throw .invalidJWS("the JWS header needs an x5c chain of three certificates")
        }
    }

    static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }

    /// Decodes unpadded base64url.
    static func base64URLDecode(_ segment: some Collection<UInt8>) -> Data? {
        var text = String(decoding: segment, as: UTF8.self)
            .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while text.utf8.count % 4 != 0 { text += "=" }
        return Data(base64Encoded: text)
    }
}
