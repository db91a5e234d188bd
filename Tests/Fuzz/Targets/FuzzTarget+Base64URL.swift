import AppStore

extension FuzzTarget {
    /// AppStore's `Base64URL`, the table-driven decoder every JWS segment goes through: the input read as base64url
    /// text decodes exactly as a plain bit-by-bit decoder does when it is canonical and not at all otherwise, and
    /// re-encoded it is the input; the input read as data, encoded and decoded, is itself.
    static let base64URL = FuzzTarget(
        name: "Base64URL", maxLength: 32768,
        summary: "AppStore Base64URL: decode matches a reference decoder; decode/encode round trips"
    ) { bytes throws(FuzzFailure) in
        let decoded = bytes.withUnsafeBufferPointer { Base64URL.decode($0) }
        let reference = ReferenceBase64URL(bytes)
        if reference.isCanonical {
            try expect(decoded == reference.decoded, "decoded \(describe(decoded)), the reference \(describe(reference.decoded))")
        } else {
            // Unused bits set in the last character: refused, so every value has one spelling (issue 29, item 5).
            try expect(decoded == nil, "a non-canonical spelling decoded to \(describe(decoded))")
        }
        if let decoded {
            let encoded = Array(Base64URL.encode(decoded).utf8)
            try expect(encoded == reference.canonical, "re-encoded, the input is not its canonical spelling")
        }
        let text = Base64URL.encode(bytes)
        try expect(text.utf8.count == (bytes.count * 4 + 2) / 3, "encoded \(bytes.count) bytes into \(text.utf8.count) characters")
        try expect(Base64URL.decode(text) == bytes, "encoded and decoded, \(bytes.count) bytes came back different")
    }

    private static func describe(_ bytes: [UInt8]?) -> String {
        bytes.map { "\($0.count) bytes" } ?? "nil"
    }
}
