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
}
