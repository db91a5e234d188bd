import Core
import Testing

/// What the writer adds to member-by-member writing: `/` escaped for the answers that always had it so, bytes
/// embedded as they are, any ``JSONValue``, the layout for people; and the reader's one check before embedding.
struct JSONWriterTests {
    /// `JSONSerialization`'s bytes (`.sortedKeys`, slashes escaped), as ingest's error bodies were written.
    @Test func escapesSlashesAsJSONSerializationDid() {
        var writer = JSONWriter(escapingSlashes: true)
        writer.beginObject()
        writer.key("error")
        writer.beginObject()
        writer.member("code", "a/b")
        writer.member("message", "q\" b\\ \u{8} \u{c} \n \r \t \u{1} \u{1f} \u{7f} é ✓ 𝄞 /")
        writer.endObject()
        writer.endObject()
        let expected = #"{"error":{"code":"a\/b","message":"q\" b\\ \b \f \n \r \t \u0001 \u001f "#
        #expect(writer.bytes == Array((expected + "\u{7f} é ✓ 𝄞 \\/\"}}").utf8))
        // The eight-byte fast path must not pass a slash at any offset.
        for length in 0..<20 {
            for position in 0...length {
                let plain = String(repeating: "a", count: length)
                var writer = JSONWriter(escapingSlashes: true)
                writer.string(String(plain.prefix(position)) + "/" + String(plain.dropFirst(position)))
                let expected = "\"" + String(plain.prefix(position)) + "\\/" + String(plain.dropFirst(position)) + "\""
                #expect(writer.bytes == Array(expected.utf8))
            }
        }
        var plain = JSONWriter()
        plain.string("a/b")
        #expect(plain.bytes == Array(#""a/b""#.utf8))
    }

    @Test func embedsJSONAsItIs() {
        var writer = JSONWriter()
        writer.beginObject()
        writer.member("a", 1)
        writer.key("r")
        writer.rawJSON(#" {"x" : [1]} "#.utf8)
        writer.key("l")
        writer.beginArray()
        writer.rawJSON("true".utf8)
        writer.rawJSON("[]".utf8)
        writer.endArray()
        writer.member("z", "s")
        writer.endObject()
        #expect(writer.bytes == Array(#"{"a":1,"r": {"x" : [1]} ,"l":[true,[]],"z":"s"}"#.utf8))
    }

    @Test func writesAnyValueAndReadsItBack() throws {
        let value = JSONValue.object([
            "b": .array([.integer(-3), .double(1.5), .double(1), .double(1e20), .null, .bool(false)]),
            "B": .string("x/\"y"), "a10": .object([:]), "a2": .array([]),
        ])
        var writer = JSONWriter()
        writer.value(value)
        #expect(writer.bytes == Array(#"{"B":"x/\"y","a10":{},"a2":[],"b":[-3,1.5,1.0,1e+20,null,false]}"#.utf8))
        #expect(try JSONReader.parse(writer.bytes) == value)
    }

    /// The layout `JSONSerialization`'s `.prettyPrinted` gave `tollctl verify`.
    @Test func laysOutForPeopleAsJSONSerializationDid() throws {
        let value = try JSONReader.parse(
            Array(#"{"x":null,"t":true,"n":1700000000123,"g":{"a":[1,{"b":2}]},"f":[],"e":{},"d":1.5,"s":"/"}"#.utf8))
        let expected = """
            {
              "d" : 1.5,
              "e" : {

              },
              "f" : [

              ],
              "g" : {
                "a" : [
                  1,
                  {
                    "b" : 2
                  }
                ]
              },
              "n" : 1700000000123,
              "s" : "/",
              "t" : true,
              "x" : null
            }
            """
        #expect(String(decoding: JSONWriter.prettyPrinted(value), as: UTF8.self) == expected)
        #expect(JSONWriter.prettyPrinted(.string("a")) == Array(#""a""#.utf8))
    }

    @Test(arguments: [
        "{", "{\"a\":}", "[1,]", "{\"a\":1}x", "tru", "01", "1.", "-", "\"unterminated", "{\"a\" 1}", "\"bad \\q\"",
        "\"ctrl \u{1}\"", "{\"a\":1,}", "", "   ", "\"\\u12g4\"", "{\"a\":1,\"a\":2}", "\"\\ud800\"",
        String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
    ])
    func isValidRefusesWhatTheReaderRefuses(text: String) {
        #expect(!JSONReader.isValid(Array(text.utf8)))
    }

    @Test(arguments: [
        "{}", "[]", " {\"a\" : [1, -2.5e+3, 0, true, false, null, \"s\\\"\\u00e9\"]} ", "0", "-0.0E-1", "\"x\"", "null",
        String(repeating: "[", count: 60) + String(repeating: "]", count: 60),
    ])
    func isValidAcceptsWhatTheReaderReads(text: String) throws {
        #expect(JSONReader.isValid(Array(text.utf8)))
        _ = try JSONReader.parse(Array(text.utf8))
    }
}
