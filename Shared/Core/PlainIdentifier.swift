/// The identifiers Tollgate takes from outside and uses in key names or lists: 1 to `maxBytes` ASCII letters,
/// digits, `.`, `-` and `_` (service key names, Apple's transaction and offer identifiers).
package enum PlainIdentifier {
    package static func isValid(_ text: some StringProtocol, maxBytes: Int = 64) -> Bool {
        (1...maxBytes).contains(text.utf8.count) && text.utf8.allSatisfy(isIdentifierByte)
    }

    package static func isIdentifierByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"):
            return true
        default:
            return false
        }
    }
}
