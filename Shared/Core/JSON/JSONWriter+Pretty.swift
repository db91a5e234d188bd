extension JSONWriter {
    /// `value` laid out for people (`tollctl verify`) as `JSONSerialization`'s `.prettyPrinted` lays it out: two
    /// spaces a level, `"name" : value`, an empty container as `{`, a blank line, `}`. Members in the byte order of
    /// their keys, scalars as ``value(_:)`` writes them.
    package static func prettyPrinted(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter(capacity: 4096)
        writer.pretty(value, depth: 0)
        return writer.bytes
    }

    private mutating func pretty(_ value: JSONValue, depth: Int) {
        switch value {
        case .array(let values):
            bytes.append(UInt8(ascii: "["))
            for (index, element) in values.enumerated() {
                newline(after: index, depth: depth + 1)
                pretty(element, depth: depth + 1)
            }
            close(UInt8(ascii: "]"), depth: depth, empty: values.isEmpty)
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (index, name) in members.keys.sorted(by: Self.byteOrder).enumerated() {
                newline(after: index, depth: depth + 1)
                writeQuoted(name)
                bytes.append(contentsOf: [UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: " ")])
                pretty(members[name] ?? .null, depth: depth + 1)
            }
            close(UInt8(ascii: "}"), depth: depth, empty: members.isEmpty)
        default:
            // A scalar outside any container the writer tracks: written with no separator.
            self.value(value)
        }
    }

    private mutating func newline(after index: Int, depth: Int) {
        if index > 0 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(0x0a)
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * depth))
    }

    /// An empty container gets a blank line between its brackets, as `JSONSerialization` writes it.
    private mutating func close(_ bracket: UInt8, depth: Int, empty: Bool) {
        bytes.append(0x0a)
        if empty { bytes.append(0x0a) }
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * depth))
        bytes.append(bracket)
    }
}
