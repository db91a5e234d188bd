/// Standard base64 (RFC 4648 §4) as receipts carry it: the standard alphabet, `=` padding only at the end and at
/// most two of it, a length that is a multiple of four. One pass with a table over contiguous bytes; ingest checks a
/// submitted receipt with it and the verifier the receipt it sends to Apple, so both accept the same receipts.
package enum StandardBase64 {
    package static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count % 4 == 0 else { return false }
        var padding = 0
        for byte in bytes {
            if byte == UInt8(ascii: "=") {
                padding += 1
            } else if !alphabet[Int(byte)] || padding > 0 {
                return false
            }
        }
        return padding <= 2
    }

    package static func isValid(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { isValid($0) }
    }

    /// `alphabet[byte]`: the byte is in the standard alphabet (not counting `=`).
    private static let alphabet: [Bool] = (0...255).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "+"), UInt8(ascii: "/"):
            true
        default:
            false
        }
    }
}
