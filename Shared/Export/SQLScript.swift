/// A SQL file cut into its statements: PostgreSQL's extended protocol (which the client speaks) takes one statement
/// per query. A statement ends at a `;` outside comments (`--`, `/* */`), quoted strings and identifiers (`'…'`,
/// `"…"`), dollar quotes (`$$…$$`, `$tag$…$tag$`) and SQL-standard function bodies (`BEGIN ATOMIC … END`, whose
/// `CASE … END` pairs are counted); empty statements are dropped.
package enum SQLScript {
    package static func statements(_ text: String) -> [String] {
        let bytes = Array(text.utf8)
        var statements: [String] = []
        var start = 0
        var index = 0
        // Inside `BEGIN ATOMIC … END`: the open CASEs, so that their ENDs are not taken for the body's.
        var atomic = false
        var openCases = 0
        var previousWord = ""
        func finish(_ end: Int) {
            let statement = String(decoding: bytes[start..<end], as: UTF8.self)
            if !isBlank(statement) { statements.append(statement.trimmingWhitespace()) }
        }
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "-") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "-"):
                while index < bytes.count && bytes[index] != UInt8(ascii: "\n") { index += 1 }
            case UInt8(ascii: "/") where index + 1 < bytes.count && bytes[index + 1] == UInt8(ascii: "*"):
                index += 2
                while index + 1 < bytes.count && !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/")) {
                    index += 1
                }
                index += 2
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                index += 1
                while index < bytes.count && bytes[index] != byte { index += 1 }
                index += 1
            case UInt8(ascii: "$"):
                var end = index + 1
                while end < bytes.count && (isWord(bytes[end])) { end += 1 }
                if end < bytes.count && bytes[end] == UInt8(ascii: "$") {
                    let tag = Array(bytes[index...end])
                    index = end + 1
                    while index < bytes.count && !bytes[index...].starts(with: tag) { index += 1 }
                    index += tag.count
                } else {
                    index += 1
                }
            case UInt8(ascii: ";") where !atomic:
                finish(index)
                index += 1
                start = index
            case _ where isWord(byte) && !(byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")):
                var end = index
                while end < bytes.count && isWord(bytes[end]) { end += 1 }
                let word = String(decoding: bytes[index..<end], as: UTF8.self).uppercased()
                if word == "ATOMIC" && previousWord == "BEGIN" {
                    atomic = true
                } else if atomic && word == "CASE" {
                    openCases += 1
                } else if atomic && word == "END" {
                    if openCases > 0 { openCases -= 1 } else { atomic = false }
                }
                previousWord = word
                index = end
            default:
                index += 1
            }
        }
        if start < bytes.count { finish(bytes.count) }
        return statements
    }

    private static func isWord(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z")) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "_")
    }

    /// Whether `statement` holds only whitespace and comments.
    private static func isBlank(_ statement: String) -> Bool {
        statement.split(separator: "\n").allSatisfy { line in
            let text = line.drop { $0 == " " || $0 == "\t" || $0 == "\r" }
            return text.isEmpty || text.hasPrefix("--")
        }
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }
        return String(drop(while: isSpace).reversed().drop(while: isSpace).reversed())
    }
}
