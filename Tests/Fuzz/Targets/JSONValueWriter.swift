import Core

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
