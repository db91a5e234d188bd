/// One command as an argument vector (name first), binary safe.
package struct RedisCommand: Sendable, Hashable {
    package var arguments: [[UInt8]]

    package init(_ name: String, _ arguments: any RedisArgumentConvertible...) {
        self.init(name, arguments: arguments)
    }

    package init(_ name: String, arguments: [any RedisArgumentConvertible]) {
        self.arguments = [Array(name.utf8)] + arguments.map(\.redisArgument)
    }

    package init(arguments: [[UInt8]]) {
        self.arguments = arguments
    }

    /// The command name for logs (never the arguments, which may hold secrets or payloads).
    package var name: String {
        arguments.first.map { String(decoding: $0, as: UTF8.self).uppercased() } ?? ""
    }

    /// Whether the server may hold this command (and every later one on its connection) until something
    /// happens: the blocking list, sorted-set and stream reads, `WAIT` and `WAITAOF`. A multiplexed connection
    /// sends nothing after such a command until its reply arrives, and a pool routes other callers around it.
    package var mayBlock: Bool {
        guard let first = arguments.first, first.count >= 4, first.count <= 10 else { return false }
        if Self.blocking.contains(where: { Self.matches(first, $0) }) { return true }
        guard Self.matches(first, Self.xread) || Self.matches(first, Self.xreadgroup) else { return false }
        return arguments.dropFirst().contains { Self.matches($0, Self.block) }
    }

    private static let blocking: [[UInt8]] = [
        "BLPOP", "BRPOP", "BRPOPLPUSH", "BLMOVE", "BLMPOP", "BZPOPMIN", "BZPOPMAX", "BZMPOP", "WAIT", "WAITAOF",
    ].map { Array($0.utf8) }
    private static let xread = Array("XREAD".utf8)
    private static let xreadgroup = Array("XREADGROUP".utf8)
    private static let block = Array("BLOCK".utf8)

    /// `bytes` equals the upper-case ASCII `upper`, ignoring case, without building a String (this runs for
    /// every command a pool routes).
    private static func matches(_ bytes: [UInt8], _ upper: [UInt8]) -> Bool {
        guard bytes.count == upper.count else { return false }
        for (byte, expected) in zip(bytes, upper) where byte != expected && !(byte >= 0x61 && byte <= 0x7A && byte - 0x20 == expected) {
            return false
        }
        return true
    }
}
