/// One response header line as libcurl hands it over (`Name: value\r\n`), read byte by byte.
enum HeaderLine {
    /// The lowercased name and the value without surrounding blanks; `nil` for a line without a colon (the
    /// status line, the blank line that ends the headers).
    static func parse(_ line: UnsafeRawBufferPointer) -> (name: String, value: String)? {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else { return nil }
        let name = trimmed(UnsafeRawBufferPointer(rebasing: line[..<colon]))
        let value = trimmed(UnsafeRawBufferPointer(rebasing: line[(colon + 1)...]))
        return (String(decoding: name, as: UTF8.self).lowercased(), String(decoding: value, as: UTF8.self))
    }

    private static func trimmed(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        func isBlank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }
        guard let first = bytes.firstIndex(where: { !isBlank($0) }), let last = bytes.lastIndex(where: { !isBlank($0) })
        else { return UnsafeRawBufferPointer(rebasing: bytes[0..<0]) }
        return UnsafeRawBufferPointer(rebasing: bytes[first...last])
    }
}
