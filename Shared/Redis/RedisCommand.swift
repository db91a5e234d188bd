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
    var name: String {
        arguments.first.map { String(decoding: $0, as: UTF8.self).uppercased() } ?? ""
    }

    /// Whether the server may hold this command (and every later one on its connection) until something
    /// happens: the blocking list, sorted-set and stream reads, `WAIT` and `WAITAOF`. A multiplexed connection
    /// sends nothing after such a command until its reply arrives, and a pool routes other callers around it.
    package var mayBlock: Bool {
        guard let first = arguments.first, first.count >= 4, first.count <= 10 else { return false }
        let name = String(decoding: first, as: UTF8.self).uppercased()
        switch name {
        case "BLPOP", "BRPOP", "BRPOPLPUSH", "BLMOVE", "BLMPOP", "BZPOPMIN", "BZPOPMAX", "BZMPOP", "WAIT", "WAITAOF":
            return true
        case "XREAD", "XREADGROUP":
            return arguments.dropFirst().contains { $0.count == 5 && String(decoding: $0, as: UTF8.self).uppercased() == "BLOCK" }
        default:
            return false
        }
    }
}
