import Core

extension FuzzTarget {
    /// Core's `JSONReader` (every JSON body ingest takes, Apple's payloads in the verifier) and the `JSONWriter` beside
    /// it: a document the reader accepts, written back and read again, is the same value, and writing that value
    /// again gives the same bytes.
    static let jsonReader = FuzzTarget(
        name: "JSONReader", maxLength: 65536,
        summary: "Core JSONReader: accepted documents survive JSONWriter and a second read"
    ) { bytes throws(FuzzFailure) in
        guard let value = try? JSONReader.parse(bytes) else { return }
        let written = JSONValueWriter.bytes(of: value)
        let again: JSONValue
        do {
            again = try JSONReader.parse(written)
        } catch {
            throw FuzzFailure(
                "JSONReader refuses what JSONWriter wrote (\(error)): \(String(decoding: written.prefix(200), as: UTF8.self))")
        }
        try expect(again == value, "written and read again, the value changed")
        try expect(JSONValueWriter.bytes(of: again) == written, "the value read back is written differently")
    }
}

/// A ``Core/JSONValue`` written with ``Core/JSONWriter``: members in sorted order, a `Double` in Swift's shortest
/// spelling that reads back exactly.
enum JSONValueWriter {
    static func bytes(of value: JSONValue) -> [UInt8] {
        var writer = JSONWriter()
        write(value, to: &writer)
        return writer.bytes
    }

    static func write(_ value: JSONValue, to writer: inout JSONWriter) {
        switch value {
        case .null: writer.null()
        case .bool(let flag): writer.bool(flag)
        case .integer(let number): writer.integer(number)
        case .double(let number): writer.rawNumber("\(number)")
        case .string(let text): writer.string(text)
        case .array(let values):
            writer.beginArray()
            for element in values { write(element, to: &writer) }
            writer.endArray()
        case .object(let members):
            writer.beginObject()
            for key in members.keys.sorted() {
                writer.key(key)
                if let member = members[key] { write(member, to: &writer) }
            }
            writer.endObject()
        }
    }
}
