import Foundation

/// Text as PostgreSQL stores it (docs/EXPORT.md, "Text PostgreSQL cannot store"). A `text` value cannot hold U+0000,
/// and `jsonb` refuses the escape `\u0000`; everything else valid UTF-8 is stored as it is (Swift's strings are valid
/// UTF-8: bytes that are not were repaired to U+FFFD when they were read). Ingest refuses a NUL in the text it
/// accepts; the export escapes it in what others wrote — Apple's signed fields, the ledger's
/// older records — so that an event is never refused for its encoding.
package enum PostgresText {
    /// What a NUL is stored as: the six characters `\u0000`, in a column and inside `body` alike.
    package static let escapedNul = #"\u0000"#

    /// Whether PostgreSQL stores `text` as it is: it holds no NUL.
    package static func isStorable(_ text: some StringProtocol) -> Bool {
        !text.utf8.contains(0)
    }

    /// `text` with each NUL written as ``escapedNul``.
    package static func text(_ text: String) -> String {
        guard !isStorable(text) else { return text }
        return text.replacingOccurrences(of: "\u{0}", with: escapedNul)
    }

    /// The JSON text `json` with each escaped NUL (`\u0000` in a string) written as an escaped backslash and `u0000`,
    /// which is what ``text(_:)`` makes of that string; a raw NUL byte, which no JSON string may hold, as the same.
    /// Every other byte, escape or not, is kept.
    package static func json(_ json: String) -> String {
        let bytes = Array(json.utf8)
        guard bytes.contains(0) || json.contains(#"\u0000"#) else { return json }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        let nul = Array(#"\u0000"#.utf8)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0 {
                out += [UInt8(ascii: "\\")] + nul
                index += 1
            } else if byte == UInt8(ascii: "\\"), index + 1 < bytes.count {
                if bytes[index + 1] == UInt8(ascii: "u"), bytes[index..<min(bytes.count, index + 6)].elementsEqual(nul) {
                    out += [UInt8(ascii: "\\")] + nul
                    index += 6
                } else {
                    // Any other escape (`\\`, `\"`, `\n`, `\u00e9`…) is copied whole, so its second byte is never
                    // taken for the start of another.
                    out += bytes[index...index + 1]
                    index += 2
                }
            } else {
                out.append(byte)
                index += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
