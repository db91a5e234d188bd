import AppStore
import Foundation

/// Cheap structural checks of an Apple JWS (compact serialization), without verifying anything: three
/// non-empty base64url segments, a JSON header with `alg` = `ES256` and an `x5c` array of three certificates.
/// The verifier checks the signature and chain; this only refuses what can never be valid. Works on bytes in
/// one pass, since notification bodies arrive in bursts.
enum JWSStructure {
    /// Throws ``IngestError`` `invalid_jws` or `unsupported_algorithm`.
    static func check(_ jws: String) throws(IngestError) {
        var jws = jws
        let scanned: Result<[UInt8]?, IngestError> = jws.withUTF8 { bytes in
            var dots: [Int] = []
            let valid = base64URLTable.withUnsafeBufferPointer { table in
                for index in 0..<bytes.count {
                    let byte = bytes[index]
                    if table[Int(byte)] { continue }
                    guard byte == UInt8(ascii: ".") else { return false }
                    dots.append(index)
                    if dots.count > 2 { return true }
                }
                return true
            }
            guard valid else { return .failure(.invalidJWS("every JWS segment must be base64url")) }
            guard dots.count == 2 else {
                return .failure(.invalidJWS("a JWS has three dot-separated segments, not \(dots.count + 1)"))
            }
            guard dots[0] > 0, dots[1] > dots[0] + 1, dots[1] < bytes.count - 1 else {
                return .failure(.invalidJWS("every JWS segment must be non-empty"))
            }
            return .success(base64URLDecode(bytes[0..<dots[0]]))
        }
        // The header read with Core's JSONReader (as the verifier reads it), not JSONDecoder: about 4 KB of JSON per
        // submission, mostly the x5c chain, and the decoder cost ingest 3 % of its CPU per purchase.
        guard let bytes = try scanned.get(), let header = try? JWSHeader.read(bytes) else {
            throw .invalidJWS("the JWS header is not base64url JSON with a string alg and an x5c array")
        }
        guard let alg = header.alg else { throw .invalidJWS("the JWS header has no alg") }
        guard alg == "ES256" else { throw .unsupportedAlgorithm(alg) }
        guard let chain = header.x5c, chain.count == 3, chain.allSatisfy({ !$0.isEmpty }) else {
            throw .invalidJWS("the JWS header needs an x5c chain of three certificates")
        }
    }

    /// `base64URLTable[byte]` is true for the base64url alphabet.
    private static let base64URLTable: [Bool] = (0...255).map { isBase64URL(UInt8($0)) }

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
    static func base64URLDecode(_ segment: some Collection<UInt8>) -> [UInt8]? {
        var standard: [UInt8] = []
        standard.reserveCapacity(segment.count + 3)
        for byte in segment {
            switch byte {
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            default: standard.append(byte)
            }
        }
        while standard.count % 4 != 0 { standard.append(UInt8(ascii: "=")) }
        return Data(base64Encoded: Data(standard)).map(Array.init)
    }
}
