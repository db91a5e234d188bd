import Foundation

/// Cheap structural checks of an Apple JWS (compact serialization), without verifying anything: three
/// non-empty base64url segments, a JSON header with `alg` = `ES256` and an `x5c` array of three certificates.
/// The verifier checks the signature and chain; this only refuses what can never be valid. Works on bytes in
/// one pass, since notification bodies arrive in bursts. Ingest runs it on every JWS it is sent.
package enum JWSStructure {
    /// Throws ``JWSStructureError``, which ingest answers as `invalid_jws` or `unsupported_algorithm`.
    package static func check(_ jws: String) throws(JWSStructureError) {
        var jws = jws
        let scanned: Result<[UInt8]?, JWSStructureError> = jws.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return .failure(.invalidJWS("a JWS has three dot-separated segments, not 1")) }
            // The dots found with memchr; then every byte checked against one table (base64url and '.'), ORed into
            // `bad` without a branch per byte. A notification's JWS is about 18 KB.
            var dots: [Int] = []
            var from = 0
            while dots.count < 3, from < bytes.count, let found = memchr(base + from, 0x2E, bytes.count - from) {
                let index = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                dots.append(index)
                from = index + 1
            }
            guard dots.count == 2 else {
                let found = dots.count > 2 ? "4 or more" : "\(dots.count + 1)"
                return .failure(.invalidJWS("a JWS has three dot-separated segments, not \(found)"))
            }
            var bad: UInt8 = 0
            segmentTable.withUnsafeBufferPointer { table in
                for byte in bytes { bad |= table[Int(byte)] }
            }
            guard bad == 0 else { return .failure(.invalidJWS("every JWS segment must be base64url")) }
            guard dots[0] > 0, dots[1] > dots[0] + 1, dots[1] < bytes.count - 1 else {
                return .failure(.invalidJWS("every JWS segment must be non-empty"))
            }
            return .success(Base64URL.decode(UnsafeBufferPointer(rebasing: bytes[0..<dots[0]])))
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

    /// `segmentTable[byte]`: 0 for the base64url alphabet and the dot between segments, 1 for anything else.
    private static let segmentTable: [UInt8] = (0...255).map { isBase64URL(UInt8($0)) || $0 == 0x2E ? 0 : 1 }

    package static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
