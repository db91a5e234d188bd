import Foundation

/// Base64url (RFC 4648 §5) without padding, as JWS uses it: a table-driven decoder that works on raw
/// bytes without intermediate strings, and an encoder.
package enum Base64URL {
    /// Decoding table: 0...63 for alphabet bytes, 0xFF for anything else.
    private static let table: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Decodes unpadded base64url bytes; `nil` for any byte outside the alphabet, padding, an impossible length, or
    /// unused bits that are not zero (RFC 4648 §3.5 canonical encoding): each value has exactly one spelling, so a
    /// signature's 64 bytes cannot be written 16 ways (its last character carries four unused bits).
    package static func decode(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let count = input.count
        if count % 4 == 1 { return nil }
        guard count > 0, let source = input.baseAddress else { return [] }
        let outputCount = count / 4 * 3 + max(0, count % 4 - 1)
        // Every byte is decoded and its table value ORed into `bad` (alphabet bytes are below 64): no branch per
        // quad, one check at the end. A bad byte costs the whole segment's decoding, which is what a good one costs.
        var bad: UInt8 = 0
        let output = table.withUnsafeBufferPointer { table in
            [UInt8](unsafeUninitializedCapacity: outputCount) { buffer, initialized in
                guard let table = table.baseAddress, let target = buffer.baseAddress else { return }
                var inIndex = 0
                var outIndex = 0
                let whole = count & ~3
                while inIndex < whole {
                    let a = table[Int(source[inIndex])]
                    let b = table[Int(source[inIndex + 1])]
                    let c = table[Int(source[inIndex + 2])]
                    let d = table[Int(source[inIndex + 3])]
                    bad |= a | b | c | d
                    let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    target[outIndex] = UInt8(truncatingIfNeeded: word >> 16)
                    target[outIndex + 1] = UInt8(truncatingIfNeeded: word >> 8)
                    target[outIndex + 2] = UInt8(truncatingIfNeeded: word)
                    inIndex += 4
                    outIndex += 3
                }
                let rest = count - whole
                if rest >= 2 {
                    let a = table[Int(source[inIndex])]
                    let b = table[Int(source[inIndex + 1])]
                    let c = rest == 3 ? table[Int(source[inIndex + 2])] : 0
                    bad |= a | b | c
                    // The bits below the last byte decoded must be zero: 4 of `b` with one byte left, 2 of `c` with two.
                    let unused = rest == 3 ? c & 0x03 : b & 0x0F
                    bad |= unused == 0 ? 0 : 0x40
                    let word = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                    target[outIndex] = UInt8(truncatingIfNeeded: word >> 16)
                    if rest == 3 { target[outIndex + 1] = UInt8(truncatingIfNeeded: word >> 8) }
                }
                initialized = outputCount
            }
        }
        return bad & 0xC0 == 0 ? output : nil
    }

    /// Decodes an unpadded base64url string.
    package static func decode(_ string: some StringProtocol) -> [UInt8]? {
        var bytes = Array(string.utf8)
        return bytes.withUnsafeMutableBufferPointer { decode(UnsafeBufferPointer($0)) }
    }

    /// Encodes bytes as unpadded base64url.
    package static func encode(_ bytes: some Collection<UInt8>) -> String {
        let input = Array(bytes)
        var output = [UInt8]()
        output.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= input.count {
            let word = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            output.append(alphabet[Int(word >> 18 & 63)])
            output.append(alphabet[Int(word >> 12 & 63)])
            output.append(alphabet[Int(word >> 6 & 63)])
            output.append(alphabet[Int(word & 63)])
            index += 3
        }
        let rest = input.count - index
        if rest > 0 {
            let word = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
            output.append(alphabet[Int(word >> 18 & 63)])
            output.append(alphabet[Int(word >> 12 & 63)])
            if rest == 2 { output.append(alphabet[Int(word >> 6 & 63)]) }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
