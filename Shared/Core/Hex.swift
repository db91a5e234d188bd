/// Lowercase hexadecimal text of bytes (digests, ids), two digits a byte, from a table: Foundation's
/// `String(format: "%02x")` costs a formatter per byte.
package enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    package static func lowercase(_ bytes: some Collection<UInt8>) -> String {
        String(unsafeUninitializedCapacity: 2 * bytes.count) { text in
            var index = 0
            for byte in bytes {
                text[index] = digits[Int(byte >> 4)]
                text[index + 1] = digits[Int(byte & 0x0f)]
                index += 2
            }
            return index
        }
    }
}
