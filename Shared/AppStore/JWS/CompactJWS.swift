import Foundation

/// A JWS in compact serialization (`header.payload.signature`), split into its segments without
/// decoding them. The segments are ranges into one byte array, so the signing input
/// (`header.payload`) needs no copy.
package struct CompactJWS: Sendable {
    /// The whole JWS as bytes.
    package let bytes: [UInt8]
    /// The header segment (base64url).
    package let header: Range<Int>
    /// The payload segment (base64url).
    package let payload: Range<Int>
    /// The signature segment (base64url).
    package let signature: Range<Int>

    /// The bytes the signature covers: `header.payload`.
    package var signingInput: Range<Int> { header.lowerBound..<payload.upperBound }

    /// Splits `jws`; `nil` unless it has exactly three segments with a non-empty header and payload.
    package init?(_ jws: some StringProtocol) {
        var bytes = Array(jws.utf8)
        // Tolerate surrounding whitespace (files often end with a newline), nothing else.
        while let last = bytes.last, last == 0x0A || last == 0x0D || last == 0x20 || last == 0x09 { bytes.removeLast() }
        var start = 0
        while start < bytes.count, bytes[start] == 0x20 || bytes[start] == 0x0A || bytes[start] == 0x09 || bytes[start] == 0x0D {
            start += 1
        }
        guard let dots = Self.findDots(bytes, from: start) else { return nil }
        let header = start..<dots.0
        let payload = (dots.0 + 1)..<dots.1
        let signature = (dots.1 + 1)..<bytes.count
        // An empty signature (`alg: none`) still splits, so that the algorithm check can name it.
        guard !header.isEmpty, !payload.isEmpty else { return nil }
        self.bytes = bytes
        self.header = header
        self.payload = payload
        self.signature = signature
    }

    /// The positions of exactly two dots at or after `start` (memchr: JWS are kilobytes long).
    private static func findDots(_ bytes: [UInt8], from start: Int) -> (Int, Int)? {
        bytes.withUnsafeBufferPointer { buffer -> (Int, Int)? in
            guard let base = buffer.baseAddress, start < buffer.count else { return nil }
            func next(after index: Int) -> Int? {
                guard index < buffer.count, let found = memchr(base + index, 0x2E, buffer.count - index) else { return nil }
                return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
            }
            guard let first = next(after: start), let second = next(after: first + 1) else { return nil }
            if next(after: second + 1) != nil { return nil }
            return (first, second)
        }
    }

    /// Decodes one segment from base64url; `nil` if it is not valid base64url.
    package func decode(_ segment: Range<Int>) -> [UInt8]? {
        bytes.withUnsafeBufferPointer { buffer in
            Base64URL.decode(UnsafeBufferPointer(rebasing: buffer[segment]))
        }
    }
}
