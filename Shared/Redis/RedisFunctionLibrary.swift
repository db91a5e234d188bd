/// One Redis Function library as Tollgate writes them: Lua files compiled into the binary, joined into one source
/// after the `#!lua name=…` line and the two names the shared Lua uses, `LIBRARY` (`tollgate_<name>_v<n>`) and
/// `PREFIX` (`<name>_v<n>_`, the start of every function the library registers: function names are global across
/// libraries, so a new version can be loaded beside the old one during a rollout).
///
/// The Swift side knows a library only through this value: its name, its functions, its source, and one way to
/// load and call it (a call that finds the library missing — Redis restarted without its data — loads it again and
/// retries once). `FunctionLibraryTests` loads every library into a real Redis and checks `FUNCTION LIST` against
/// ``functions``.
package struct RedisFunctionLibrary: Sendable {
    /// `tollgate_<name>_v<n>`.
    package let name: String
    /// `<name>_v<n>_`.
    package let prefix: String
    /// The functions the library registers, without the prefix.
    package let functions: [String]
    /// What `FUNCTION LOAD` receives.
    package let source: String

    /// - Parameters:
    ///   - base: the library's short name (`pipeline`, `ledger`, …), also the start of its function names.
    ///   - version: bumped whenever a function's contract changes.
    ///   - functions: the names it registers (without the prefix).
    ///   - parts: Lua sources, joined in order (the shared parts first).
    package init(_ base: String, version: Int, functions: [String], parts: [[UInt8]]) {
        name = "tollgate_\(base)_v\(version)"
        prefix = "\(base)_v\(version)_"
        self.functions = functions
        let header = "#!lua name=\(name)\nlocal LIBRARY, PREFIX = '\(name)', '\(prefix)'\n"
        source = header + parts.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
    }

    /// The full name of one of ``functions``.
    package func function(_ short: String) -> String {
        assert(functions.contains(short), "\(name) registers no function \(short)")
        return prefix + short
    }

    /// `FUNCTION LOAD REPLACE` of ``source``; throws ``RedisError/protocolError(_:)`` when Redis names the library
    /// otherwise.
    package func load(on redis: any RedisCommandExecutor) async throws {
        let loaded = try await redis.functionLoad(source)
        guard loaded == name else { throw RedisError.protocolError("loaded library is named \(loaded), expected \(name)") }
    }

    /// `FCALL` of one of ``functions``, loading the library again (once) when Redis does not have it.
    package func call(
        _ short: String, on redis: any RedisCommandExecutor, keys: [any RedisArgumentConvertible],
        arguments: [any RedisArgumentConvertible]
    ) async throws -> RedisReply {
        do {
            return try await redis.fcall(function(short), keys: keys, arguments: arguments)
        } catch let error as RedisError where Self.isMissingFunction(error) {
            try await load(on: redis)
            return try await redis.fcall(function(short), keys: keys, arguments: arguments)
        }
    }

    /// The `FCALL` of one of ``functions`` as a command, for pipelines (see ``isMissingFunction(_:)``).
    package func command(_ short: String, keys: [[UInt8]], arguments: [[UInt8]]) -> RedisCommand {
        RedisCommand(arguments: [Array("FCALL".utf8), Array(function(short).utf8), Array(String(keys.count).utf8)] + keys + arguments)
    }

    /// Whether an error says the called function (so its library) is not loaded.
    package static func isMissingFunction(_ error: RedisError) -> Bool {
        guard case .server(_, let message) = error else { return false }
        return isMissingFunction(message)
    }

    /// Whether an error reply's text says the called function is not loaded.
    package static func isMissingFunction(_ text: String) -> Bool {
        text.lowercased().contains("function not found")
    }
}
