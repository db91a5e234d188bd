/// One command as an argument vector (name first), binary safe, and — when whoever built it says so — where its
/// keys are (as valkey-swift's commands do), so a Redis Cluster client routes it without knowing the command.
package struct RedisCommand: Sendable, Hashable {
    package var arguments: [[UInt8]]
    /// The indices in ``arguments`` of the command's keys (the name is index 0), when declared; nil when not (the
    /// cluster client then finds them by ``ClusterRoute``'s table of command names: a test's or an operator's command
    /// built by name only; every command Tollgate's services, libraries and `tollctl` send declares its keys). Empty:
    /// declared keyless.
    package private(set) var keyIndices: [Int]?

    package init(_ name: String, _ arguments: any RedisArgumentConvertible...) {
        self.init(name, arguments: arguments)
    }

    package init(_ name: String, arguments: [any RedisArgumentConvertible]) {
        self.arguments = [Array(name.utf8)] + arguments.map(\.redisArgument)
    }

    /// `name arguments…` declared without keys (`MULTI`, `EXEC`, `INFO`, `PING`, …).
    package init(keyless name: String, _ arguments: any RedisArgumentConvertible...) {
        self.init(name, arguments: arguments, keysAt: [])
    }

    /// `name key rest…`: one key, the first argument.
    package init(_ name: String, key: any RedisArgumentConvertible, _ rest: any RedisArgumentConvertible...) {
        self.init(name, arguments: [key] + rest, keysAt: [0])
    }

    /// `name arguments…` whose keys are the arguments at `positions` (0 is the first argument after the name; none:
    /// a command without keys). A position outside `arguments` is ignored.
    package init(_ name: String, arguments: [any RedisArgumentConvertible], keysAt positions: some Sequence<Int>) {
        self.init(name, arguments: arguments)
        keyIndices = positions.map { $0 + 1 }.filter { self.arguments.indices.contains($0) && $0 > 0 }
    }

    package init(arguments: [[UInt8]]) {
        self.arguments = arguments
    }

    /// A whole argument vector (name first) whose keys are at `keyIndices` (indices in `arguments`, so 1 is the first
    /// argument after the name). An index outside `arguments`, or the name's, is ignored.
    package init(arguments: [[UInt8]], keyIndices: some Sequence<Int>) {
        self.arguments = arguments
        self.keyIndices = keyIndices.filter { arguments.indices.contains($0) && $0 > 0 }
    }

    /// The declared keys, in order; nil when the builder did not declare them.
    package var declaredKeys: [[UInt8]]? {
        keyIndices.map { $0.map { arguments[$0] } }
    }

    /// The command name for logs (never the arguments, which may hold secrets or payloads).
    package var name: String {
        arguments.first.map { String(decoding: $0, as: UTF8.self).uppercased() } ?? ""
    }

    /// Whether the server may hold this command (and every later one on its connection) until something happens — a
    /// blocking list, sorted-set or stream read, `WAIT`, `WAITAOF` — as declared by whoever built it
    /// (``blocking()``; valkey-swift's commands declare `isBlocking` alike); nothing infers it from the name or the
    /// arguments. A multiplexed connection sends nothing after such a command until its reply arrives, and a pool
    /// routes other callers around it (``ConnectionJob/holdsConnection``).
    package private(set) var isBlocking = false

    /// This command, declared blocking (``isBlocking``): what the builder of `XREADGROUP … BLOCK`, `WAIT`, `BLPOP` and
    /// the like calls.
    package func blocking() -> RedisCommand {
        var command = self
        command.isBlocking = true
        return command
    }
}
