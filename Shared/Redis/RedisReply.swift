/// One decoded Redis (RESP2) reply. Bulk strings stay bytes, so binary payloads round-trip exactly.
package enum RedisReply: Sendable, Hashable {
    /// A status reply such as `+OK`.
    case status(String)
    /// An error reply; only appears inside pipeline results or nested arrays (top-level errors are thrown).
    case error(String)
    case integer(Int64)
    /// A bulk string, binary safe.
    case bulk([UInt8])
    /// A nil bulk string or nil array.
    case null
    case array([RedisReply])

    /// The status text, or the bulk bytes decoded as UTF-8 (invalid sequences are repaired).
    package var string: String? {
        switch self {
        case .status(let text): text
        case .bulk(let bytes): String(decoding: bytes, as: UTF8.self)
        default: nil
        }
    }

    /// The bulk bytes, or the status text as UTF-8 bytes.
    package var bytes: [UInt8]? {
        switch self {
        case .bulk(let bytes): bytes
        case .status(let text): Array(text.utf8)
        default: nil
        }
    }

    /// An integer reply, or a bulk/status reply that parses as a decimal integer.
    package var int: Int64? {
        switch self {
        case .integer(let value): value
        case .bulk, .status: string.flatMap { Int64($0) }
        default: nil
        }
    }

    package var array: [RedisReply]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// An `HGETALL`-style flat array of names and values as a dictionary (empty for any other reply; a pair whose
    /// name or value is not a string is left out).
    package var fieldValues: [String: String] {
        let items = array ?? []
        var hash: [String: String] = [:]
        hash.reserveCapacity(items.count / 2)
        for index in stride(from: 0, to: items.count - 1, by: 2) {
            if let name = items[index].string, let value = items[index + 1].string { hash[name] = value }
        }
        return hash
    }

    package var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}
