/// One stream entry: its ID and field values (bytes, binary safe).
package struct StreamEntry: Sendable, Hashable {
    package var id: String
    package var fields: [String: [UInt8]]

    package init(id: String, fields: [String: [UInt8]]) {
        self.id = id
        self.fields = fields
    }

    /// A field's value decoded as UTF-8.
    package func string(_ field: String) -> String? {
        fields[field].map { String(decoding: $0, as: UTF8.self) }
    }

    /// Parses `[id, [field, value, …]]`; a nil field list (entry deleted while pending) gives no fields.
    init(reply: RedisReply) throws {
        guard let parts = reply.array, parts.count == 2, let id = parts[0].string else {
            throw RedisError.protocolError("stream entry is not [id, fields]")
        }
        self.id = id
        fields = [:]
        guard let flat = parts[1].array else { return }
        guard flat.count.isMultiple(of: 2) else {
            throw RedisError.protocolError("stream entry \(id) has an odd number of field items")
        }
        for index in stride(from: 0, to: flat.count, by: 2) {
            guard let name = flat[index].string, let value = flat[index + 1].bytes else {
                throw RedisError.protocolError("stream entry \(id) has a non-string field")
            }
            fields[name] = value
        }
    }

    package static func list(_ reply: RedisReply) throws -> [StreamEntry] {
        if reply.isNull { return [] }
        guard let items = reply.array else { throw RedisError.protocolError("stream entries are not an array") }
        return try items.map(StreamEntry.init(reply:))
    }
}
