import Core
import Foundation
import Testing

/// The hand JSON reader and writer the hot paths use instead of `Codable`: the reader accepts what RFC 8259 allows
/// and refuses the rest without trapping; the writer's strings are Foundation's, byte for byte.
struct JSONReaderTests {
    @Test func readsEveryKindOfValue() throws {
        let text =
            #" { "a" : [1, -0, -9223372036854775808, 9223372036854775807, 1.5, 2e3, true, false, null],"#
            + #""s":"x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00é","o":{}} "#
        let value = try JSONReader.parse(Array(text.utf8))
        guard case .object(let members) = value else {
            Issue.record("not an object: \(value)")
            return
        }
        #expect(
            members["a"]
                == .array([
                    .integer(1), .integer(0), .integer(.min), .integer(.max), .double(1.5), .double(2000), .bool(true),
                    .bool(false), .null,
                ]))
        #expect(members["s"] == .string("x\"\\/\u{8}\u{c}\n\r\té😀é"))
        #expect(members["o"] == .object([:]))
        // An integer past 64 bits is a double, which an integer field refuses; a whole number written with an
        // exponent (as Lua's cjson writes large ones) is read as the integer it is, as JSONDecoder reads it.
        #expect(try JSONReader.parse(Array("9223372036854775808".utf8)) == .double(9_223_372_036_854_775_808))
        #expect(throws: JSONError.self) { try JSONFields(JSONReader.parse(Array(#"{"n":1e19}"#.utf8))).int64("n") }
        #expect(throws: JSONError.self) { try JSONFields(JSONReader.parse(Array(#"{"n":1.5}"#.utf8))).int64("n") }
        #expect(try JSONFields(JSONReader.parse(Array(#"{"n":1e+15}"#.utf8))).int64("n") == 1_000_000_000_000_000)
    }

    @Test func refusesWhatRFC8259Refuses() {
        let refused = [
            "", " ", "{", "}", "[1,]", "{\"a\":1,}", "{a:1}", "{'a':1}", "01", "1.", ".5", "-", "+1", "1e", "tru", "nul",
            "\"unterminated", "\"\u{01}\"", "\"\\x\"", "\"\\u12\"", "\"\\ud83d\"", "\"\\ude00\"", "\"\\ud83d\\u0041\"",
            "[1] [2]", "{\"a\":1}x", "NaN", "Infinity", "1e999", "{\"a\":1,\"a\":2}", "[\"\u{7f}\", 1 2]",
        ]
        for text in refused {
            #expect(throws: JSONError.self, "\(text.debugDescription)") { try JSONReader.parse(Array(text.utf8)) }
        }
        // Invalid UTF-8 inside a string, raw or after an escape.
        #expect(throws: JSONError.self) { try JSONReader.parse([0x22, 0xff, 0x22]) }
        #expect(throws: JSONError.self) { try JSONReader.parse([0x22, 0x5c, 0x6e, 0xc3, 0x22]) }
        // Nesting is bounded: 64 levels read, 65 refused, a million neither traps nor recurses that deep.
        func nested(_ depth: Int) -> [UInt8] { Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8) }
        #expect(throws: Never.self) { try JSONReader.parse(nested(64)) }
        #expect(throws: JSONError.self) { try JSONReader.parse(nested(65)) }
        #expect(throws: JSONError.self) { try JSONReader.parse(Array(repeating: UInt8(ascii: "["), count: 1_000_000)) }
    }

    /// Strings are scanned eight bytes at a time: a quote, a backslash, a control character or a non-ASCII byte at
    /// every offset of a word, and at every length around a word, is read (or refused) as byte by byte.
    @Test func stringsAreReadAlikeWhereverTheirSpecialBytesFall() throws {
        for length in 0..<20 {
            for position in 0...length {
                let plain = String(repeating: "a", count: length)
                let index = plain.index(plain.startIndex, offsetBy: position)
                func document(_ inserted: String) -> [UInt8] {
                    Array("[\"\(plain[..<index])\(inserted)\(plain[index...])\"]".utf8)
                }
                func read(_ inserted: String) throws -> String? {
                    guard case .array(let values) = try JSONReader.parse(document(inserted)), case .string(let string) = values.first
                    else { return nil }
                    return string
                }
                let context = "length \(length), position \(position)"
                #expect(try read("") == plain, "\(context)")
                #expect(try read(#"\""#) == plain.prefix(position) + "\"" + plain.dropFirst(position), "\(context)")
                #expect(try read(#"\\"#) == plain.prefix(position) + "\\" + plain.dropFirst(position), "\(context)")
                #expect(try read("é") == plain.prefix(position) + "é" + plain.dropFirst(position), "\(context)")
                #expect(try read("😀") == plain.prefix(position) + "😀" + plain.dropFirst(position), "\(context)")
                #expect(throws: JSONError.self, "\(context)") { try read("\u{1f}") }
                #expect(throws: JSONError.self, "\(context)") { try read("\n") }
                // Invalid UTF-8 (a lone continuation byte, a truncated sequence) anywhere in the run.
                for invalid: [UInt8] in [[0x80], [0xC3], [0xF0, 0x9F, 0x98], [0xFF]] {
                    var bytes = Array("[\"\(plain)\"]".utf8)
                    bytes.insert(contentsOf: invalid, at: 2 + position)
                    #expect(throws: JSONError.self, "\(context) \(invalid)") { try JSONReader.parse(bytes) }
                }
                // Unterminated, however far the run goes.
                #expect(throws: JSONError.self, "\(context)") { try JSONReader.parse(Array("\"\(plain)".utf8)) }
            }
        }
    }

    /// The writer checks eight bytes at a time whether a string needs escaping: a byte that does, at every offset
    /// of a word and at every length around one, is escaped as `JSONEncoder` escapes it.
    @Test func stringsAreWrittenAlikeWhereverTheirSpecialBytesFall() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        for length in 0..<20 {
            for position in 0...length {
                for inserted in ["", "\"", "\\", "\u{1f}", "\n", "é", "/"] {
                    let plain = String(repeating: "a", count: length)
                    let string = String(plain.prefix(position)) + inserted + String(plain.dropFirst(position))
                    var writer = JSONWriter()
                    writer.beginArray()
                    writer.string(string)
                    writer.endArray()
                    #expect(writer.bytes == Array(try encoder.encode([string])), "\(string.debugDescription)")
                }
            }
        }
    }

    @Test func fieldsAreReadWithTheirTypes() throws {
        let fields = try JSONFields(JSONReader.parse(Array(#"{"s":"x","n":3,"b":true,"z":null,"a":[1,2]}"#.utf8)))
        #expect(try fields.string("s") == "x")
        #expect(try fields.int("n") == 3)
        #expect(try fields.bool("b"))
        #expect(try fields.optionalString("z") == nil)
        #expect(try fields.optionalString("absent") == nil)
        #expect(throws: JSONError("missing is missing")) { try fields.string("missing") }
        #expect(throws: JSONError("n is a number, not a string")) { try fields.string("n") }
        #expect(throws: JSONError("s is a string, not an integer")) { try fields.optionalInt64("s") }
        #expect(
            try fields.array("a") { (value, path) throws(JSONError) -> Int64 in
                guard case .integer(let number) = value else { throw JSONError(path) }
                return number
            } == [1, 2])
        #expect(throws: JSONError.self) { try JSONFields(.array([])) }
    }

    /// The writer against `JSONEncoder` (`.sortedKeys`, `.withoutEscapingSlashes`) on every control character,
    /// escapes, non-ASCII, and integers at both ends.
    @Test func writesWhatJSONEncoderWrites() throws {
        struct Sample: Encodable {
            var a: String
            var b: Int64
            var c: Bool?
            var d: [String]
        }
        let strings = [
            (0..<0x20).map { String(UnicodeScalar(UInt8($0))) }.joined(), "\"\\/é\u{2028}\u{7f}😀", "", "plain",
        ]
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        for (index, string) in strings.enumerated() {
            for number: Int64 in [0, 7, -7, 1_700_000_000_000, .min, .max] {
                let sample = Sample(a: string, b: number, c: index % 2 == 0 ? nil : true, d: [string, "x"])
                var writer = JSONWriter()
                writer.beginObject()
                writer.member("a", sample.a)
                writer.member("b", sample.b)
                writer.member("c", sample.c)
                writer.key("d")
                writer.beginArray()
                for element in sample.d { writer.string(element) }
                writer.endArray()
                writer.endObject()
                #expect(writer.bytes == Array(try encoder.encode(sample)), "\(string.debugDescription) \(number)")
                // And the reader reads back what was written.
                let read = try JSONFields(JSONReader.parse(writer.bytes))
                #expect(try read.string("a") == string)
                #expect(try read.int64("b") == number)
            }
        }
    }
}
