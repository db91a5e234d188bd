/// The rule for user ids, which end up inside Redis keys (`tg:{u:<userId>}:…`) and in authorization checks:
/// 1–128 bytes of ASCII letters, digits, `-`, `_`, `.` and `@`, compared byte for byte (Swift's `String ==` is
/// canonical equivalence: `"é"` and `"e\u{301}"` are equal strings but different users).
package enum UserID {
    package static let maxBytes = 128

    /// Whether `id` is a usable user id.
    package static func isValid(_ id: String) -> Bool {
        let bytes = id.utf8
        guard !bytes.isEmpty, bytes.count <= maxBytes else { return false }
        return bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "@")
        }
    }

    /// Whether two user ids are the same bytes.
    package static func same(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.elementsEqual(rhs.utf8)
    }
}
