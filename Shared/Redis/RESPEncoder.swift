/// Writes commands in RESP (`*argc`, then `$len` and the bytes of each argument), binary safe.
enum RESPEncoder {
    static func append(_ command: RedisCommand, to buffer: inout [UInt8]) {
        let arguments = command.arguments
        appendHeader(UInt8(ascii: "*"), arguments.count, to: &buffer)
        for argument in arguments {
            appendHeader(UInt8(ascii: "$"), argument.count, to: &buffer)
            buffer.append(contentsOf: argument)
            buffer.append(13)
            buffer.append(10)
        }
    }

    /// `*N\r\n` or `$N\r\n` (a small decimal string never allocates).
    private static func appendHeader(_ marker: UInt8, _ value: Int, to buffer: inout [UInt8]) {
        buffer.append(marker)
        buffer.append(contentsOf: String(value).utf8)
        buffer.append(13)
        buffer.append(10)
    }
}
