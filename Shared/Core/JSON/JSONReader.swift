/// Reads one JSON document (RFC 8259) into a ``JSONValue``: strict (no trailing commas, comments, leading zeros,
/// or bytes after the value but whitespace), nesting at most ``maxDepth`` deep, strings decoded from UTF-8 with
/// every escape including surrogate pairs (an unpaired surrogate or invalid UTF-8 is an error), and an object
/// with one key twice refused (readers that keep the first and readers that keep the last would disagree).
package enum JSONReader {
    package static let maxDepth = 64

    package static func parse(_ bytes: [UInt8]) throws(JSONError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { (buffer) throws(JSONError) -> JSONValue in
            var parser = Parser(bytes: buffer)
            let value = try parser.value(depth: 0)
            parser.skipWhitespace()
            guard parser.index == buffer.count else { throw parser.error("bytes after the document") }
            return value
        }
    }

    /// Whether `bytes` are one document ``parse(_:)`` reads, by the same rules: the one check before bytes stored as
    /// JSON are embedded in an answer as they are (``JSONWriter/rawJSON(_:)``), not written again from the value.
    package static func isValid(_ bytes: [UInt8]) -> Bool {
        (try? parse(bytes)) != nil
    }

    private struct Parser {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        func error(_ what: String) -> JSONError { JSONError("invalid JSON at byte \(index): \(what)") }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x0a, 0x0d, 0x09: index += 1
                default: return
                }
            }
        }

        mutating func value(depth: Int) throws(JSONError) -> JSONValue {
            skipWhitespace()
            guard let byte = current else { throw error("a value was expected") }
            switch byte {
            case UInt8(ascii: "{"):
                guard depth < JSONReader.maxDepth else { throw error("nested deeper than \(JSONReader.maxDepth)") }
                return try object(depth: depth + 1)
            case UInt8(ascii: "["):
                guard depth < JSONReader.maxDepth else { throw error("nested deeper than \(JSONReader.maxDepth)") }
                return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"):
                try literal("true")
                return .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                return .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                return .null
            default: return try number()
            }
        }

        mutating func object(depth: Int) throws(JSONError) -> JSONValue {
            index += 1
            var members: [String: JSONValue] = [:]
            skipWhitespace()
            if current == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipWhitespace()
                guard current == UInt8(ascii: "\"") else { throw error("a member name was expected") }
                let key = try string()
                skipWhitespace()
                guard current == UInt8(ascii: ":") else { throw error("':' was expected") }
                index += 1
                let value = try value(depth: depth)
                guard members.updateValue(value, forKey: key) == nil else {
                    throw error("the member \"\(key.prefix(40))\" appears twice")
                }
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"):
                    index += 1
                    return .object(members)
                default: throw error("',' or '}' was expected")
                }
            }
        }

        mutating func array(depth: Int) throws(JSONError) -> JSONValue {
            index += 1
            var values: [JSONValue] = []
            skipWhitespace()
            if current == UInt8(ascii: "]") {
                index += 1
                return .array(values)
            }
            while true {
                values.append(try value(depth: depth))
                skipWhitespace()
                switch current {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"):
                    index += 1
                    return .array(values)
                default: throw error("',' or ']' was expected")
                }
            }
        }

        mutating func string() throws(JSONError) -> String {
            index += 1
            let start = index
            // The common case: no escapes; the bytes are the string. Eight bytes at a time while none of them is a
            // quote, a backslash or a control character (Apple's payloads carry nested JWS kilobytes long), then
            // one at a time up to the byte that stopped the word. `seen` ORs every byte, so a string found to be
            // ASCII needs no UTF-8 validation.
            let count = bytes.count
            var seen: UInt64 = 0
            while true {
                if let base = bytes.baseAddress {
                    while index + 8 <= count {
                        let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                        if JSONPlainBytes.mayEndRun(word) { break }
                        seen |= word
                        index += 8
                    }
                }
                guard index < count else { throw error("an unterminated string") }
                let byte = bytes[index]
                if byte == UInt8(ascii: "\\") { break }
                if byte == UInt8(ascii: "\"") {
                    let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                    index += 1
                    if seen & JSONPlainBytes.highBits == 0 { return String(decoding: slice, as: UTF8.self) }
                    return try Self.validated(slice, at: start)
                }
                if byte < 0x20 { throw error("a control character in a string") }
                seen |= UInt64(byte)
                index += 1
            }
            var decoded = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
            while let byte = current {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return try decoded.withUnsafeBufferPointer { (buffer) throws(JSONError) -> String in
                        try Self.validated(buffer, at: start)
                    }
                case UInt8(ascii: "\\"):
                    guard let escaped = current else { throw error("an unfinished escape") }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escaped)
                    case UInt8(ascii: "b"): decoded.append(0x08)
                    case UInt8(ascii: "f"): decoded.append(0x0c)
                    case UInt8(ascii: "n"): decoded.append(0x0a)
                    case UInt8(ascii: "r"): decoded.append(0x0d)
                    case UInt8(ascii: "t"): decoded.append(0x09)
                    case UInt8(ascii: "u"): Self.append(try unicodeEscape(), to: &decoded)
                    default: throw error("an unknown escape")
                    }
                case 0..<0x20: throw error("a control character in a string")
                default: decoded.append(byte)
                }
            }
            throw error("an unterminated string")
        }

        /// The scalar of a `\uXXXX` escape (after the `u`), joining a surrogate pair written as two escapes.
        mutating func unicodeEscape() throws(JSONError) -> Unicode.Scalar {
            let first = try hex4()
            if (0xD800..<0xDC00).contains(first) {
                guard current == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("an unpaired surrogate")
                }
                index += 2
                let second = try hex4()
                guard (0xDC00..<0xE000).contains(second) else { throw error("an unpaired surrogate") }
                let value = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                guard let scalar = Unicode.Scalar(value) else { throw error("an invalid escape") }
                return scalar
            }
            guard let scalar = Unicode.Scalar(first) else { throw error("an unpaired surrogate") }
            return scalar
        }

        mutating func hex4() throws(JSONError) -> UInt32 {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let byte = current else { throw error("an unfinished \\u escape") }
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: throw error("a non-hex digit in a \\u escape")
                }
                value = value << 4 | UInt32(digit)
                index += 1
            }
            return value
        }

        static func append(_ scalar: Unicode.Scalar, to bytes: inout [UInt8]) {
            bytes.append(contentsOf: String(scalar).utf8)
        }

        static func validated(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) throws(JSONError) -> String {
            guard let string = String(validating: bytes, as: UTF8.self) else {
                throw JSONError("invalid JSON at byte \(offset): a string that is not UTF-8")
            }
            return string
        }

        mutating func literal(_ word: StaticString) throws(JSONError) {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { throw error("an unknown literal") }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] {
                throw error("an unknown literal")
            }
            index += count
        }

        mutating func number() throws(JSONError) -> JSONValue {
            let start = index
            var negative = false
            if current == UInt8(ascii: "-") {
                negative = true
                index += 1
            }
            guard let first = current, Self.isDigit(first) else { throw error("a value was expected") }
            index += 1
            if first == UInt8(ascii: "0"), let next = current, Self.isDigit(next) { throw error("a leading zero") }
            // Accumulated negatively, so Int64.min fits; nil once it does not.
            var magnitude: Int64? = -Int64(first - UInt8(ascii: "0"))
            while let byte = current, Self.isDigit(byte) {
                if let value = magnitude {
                    let (times, overflow) = value.multipliedReportingOverflow(by: 10)
                    let (sum, overflow2) = times.subtractingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
                    magnitude = overflow || overflow2 ? nil : sum
                }
                index += 1
            }
            var integral = true
            if current == UInt8(ascii: ".") {
                integral = false
                index += 1
                guard let byte = current, Self.isDigit(byte) else { throw error("a digit was expected after '.'") }
                while let byte = current, Self.isDigit(byte) { index += 1 }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                integral = false
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard let byte = current, Self.isDigit(byte) else { throw error("a digit was expected in the exponent") }
                while let byte = current, Self.isDigit(byte) { index += 1 }
            }
            if integral, let value = magnitude {
                if negative { return .integer(value) }
                if value != .min { return .integer(-value) }
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            guard let double = Double(text), double.isFinite else { throw error("a number out of range") }
            return .double(double)
        }

        static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
    }
}
