/// Writes JSON into bytes, member by member, with no `Codable` in between: what the verifier's events and the
/// fulfiller's ledger plans are written with on the hot path. Strings are escaped exactly as Foundation's
/// `JSONEncoder` does with `.withoutEscapingSlashes` (quote, backslash, `\b \t \n \f \r`, other control
/// characters as `\u00xx`; `/` and non-ASCII as they are), so a type written here in sorted key order is byte for
/// byte what `JSONEncoder` with `.sortedKeys` wrote before (its tests compare the two).
///
/// The caller keeps the structure right (a key before each object member, containers closed); members whose
/// value is nil are left out, as `encodeIfPresent` does.
package struct JSONWriter {
    package internal(set) var bytes: [UInt8] = []
    /// For each open container: whether nothing was written in it yet.
    private var fresh: [Bool] = []
    private var afterKey = false
    /// Whether `/` is written `\/`, as `JSONSerialization` does without `.withoutEscapingSlashes`.
    private let escapesSlashes: Bool

    /// `escapingSlashes`: `/` written `\/`, for answers whose bytes were `JSONSerialization`'s default (ingest's
    /// error bodies); anything new writes `/` as it is.
    package init(capacity: Int = 512, escapingSlashes: Bool = false) {
        bytes.reserveCapacity(capacity)
        escapesSlashes = escapingSlashes
    }

    private mutating func separate() {
        if afterKey {
            afterKey = false
            return
        }
        guard let last = fresh.last else { return }
        if last {
            fresh[fresh.count - 1] = false
        } else {
            bytes.append(UInt8(ascii: ","))
        }
    }

    package mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        fresh.append(true)
    }

    package mutating func endObject() {
        fresh.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    package mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        fresh.append(true)
    }

    package mutating func endArray() {
        fresh.removeLast()
        bytes.append(UInt8(ascii: "]"))
    }

    /// `"name":[…]`, each element written by `element`.
    package mutating func array<Element>(_ name: String, _ elements: [Element], _ element: (Element, inout JSONWriter) -> Void) {
        key(name)
        beginArray()
        for item in elements { element(item, &self) }
        endArray()
    }

    package mutating func key(_ key: String) {
        separate()
        writeQuoted(key)
        bytes.append(UInt8(ascii: ":"))
        afterKey = true
    }

    package mutating func string(_ value: String) {
        separate()
        writeQuoted(value)
    }

    package mutating func integer(_ value: Int64) {
        separate()
        if value == 0 {
            bytes.append(UInt8(ascii: "0"))
            return
        }
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        // Digits least significant first, then reversed in place; negative magnitudes, so Int64.min fits.
        let first = bytes.count
        var rest = value > 0 ? -value : value
        while rest != 0 {
            let (quotient, remainder) = rest.quotientAndRemainder(dividingBy: 10)
            bytes.append(UInt8(ascii: "0") + UInt8(-remainder))
            rest = quotient
        }
        bytes[first...].reverse()
    }

    package mutating func bool(_ value: Bool) {
        separate()
        if value {
            bytes.append(contentsOf: [UInt8(ascii: "t"), UInt8(ascii: "r"), UInt8(ascii: "u"), UInt8(ascii: "e")])
        } else {
            bytes.append(contentsOf: [UInt8(ascii: "f"), UInt8(ascii: "a"), UInt8(ascii: "l"), UInt8(ascii: "s"), UInt8(ascii: "e")])
        }
    }

    package mutating func null() {
        separate()
        bytes.append(contentsOf: [UInt8(ascii: "n"), UInt8(ascii: "u"), UInt8(ascii: "l"), UInt8(ascii: "l")])
    }

    /// A number already written as JSON (`1.5`, `-2e3`); the caller guarantees its syntax.
    package mutating func rawNumber(_ text: String) {
        separate()
        bytes.append(contentsOf: text.utf8)
    }

    /// One value already written as JSON, appended as it is (not parsed and written again): bytes one of our own
    /// writers stored, or that ``JSONReader/isValid(_:)`` passed. The caller guarantees it is one whole value.
    package mutating func rawJSON(_ json: some Sequence<UInt8>) {
        separate()
        bytes.append(contentsOf: json)
    }

    /// Any value: object members in the byte order of their keys, a `Double` in Swift's shortest spelling that
    /// reads back as the same value (`1.0`, `1e+20`).
    package mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .integer(let number): integer(number)
        case .double(let number): rawNumber(number.description)
        case .string(let text): string(text)
        case .array(let values):
            beginArray()
            for element in values { self.value(element) }
            endArray()
        case .object(let members):
            beginObject()
            for name in members.keys.sorted(by: Self.byteOrder) {
                key(name)
                self.value(members[name] ?? .null)
            }
            endObject()
        }
    }

    /// Whether `a` sorts before `b` by their UTF-8 bytes.
    static func byteOrder(_ a: String, _ b: String) -> Bool { a.utf8.lexicographicallyPrecedes(b.utf8) }

    // Members: a key and its value; nil values leave the member out.

    package mutating func member(_ name: String, _ value: String?) {
        guard let value else { return }
        key(name)
        string(value)
    }

    package mutating func member(_ name: String, _ value: Int64?) {
        guard let value else { return }
        key(name)
        integer(value)
    }

    package mutating func member(_ name: String, _ value: Int?) {
        guard let value else { return }
        key(name)
        integer(Int64(value))
    }

    package mutating func member(_ name: String, _ value: Bool?) {
        guard let value else { return }
        key(name)
        bool(value)
    }

    mutating func writeQuoted(_ value: String) {
        bytes.append(UInt8(ascii: "\""))
        var value = value
        let plain = value.withUTF8 { utf8 in
            guard JSONPlainBytes.arePlain(utf8), !(escapesSlashes && utf8.contains(UInt8(ascii: "/"))) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if plain {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        let utf8 = value.utf8
        let hex = Array("0123456789abcdef".utf8)
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case UInt8(ascii: "/") where escapesSlashes: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "/")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x0a: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0c: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0d: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0..<0x20:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0f)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
