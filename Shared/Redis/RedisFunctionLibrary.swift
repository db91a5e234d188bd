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

    /// Sends `calls` (this library's `FCALL`s, from ``command(_:keys:arguments:)``) in one pipeline, followed by `WAIT`
    /// when `durability` asks for replicas (the `WAIT` covers the calls' connection; on a Redis Cluster, every primary
    /// the calls reached). When replies say the library is missing (Redis restarted without its data), loads it again
    /// and sends those calls once more, with their own `WAIT`: the one place calls recover a lost library and wait
    /// for replicas, for a single call or a batch.
    /// - Returns: each call's reply, in order, and how many replicas acknowledged (nil without durability; the fewest
    ///   of the two round trips when there were two).
    package func pipeline(
        _ calls: [RedisCommand], on redis: any RedisCommandExecutor, durability: RedisDurability = RedisDurability()
    ) async throws -> (replies: [RedisReply], replicas: Int?) {
        var (replies, replicas) = try await send(calls, on: redis, durability: durability)
        let missing = replies.indices.filter { index in
            if case .error(let text) = replies[index] { return Self.isMissingFunction(text) }
            return false
        }
        guard !missing.isEmpty else { return (replies, replicas) }
        try await load(on: redis)
        let (again, againReplicas) = try await send(missing.map { calls[$0] }, on: redis, durability: durability)
        for (position, index) in missing.enumerated() { replies[index] = again[position] }
        if let againReplicas { replicas = min(replicas ?? againReplicas, againReplicas) }
        return (replies, replicas)
    }

    /// One round trip of ``pipeline(_:on:durability:)``.
    private func send(
        _ calls: [RedisCommand], on redis: any RedisCommandExecutor, durability: RedisDurability
    ) async throws -> (replies: [RedisReply], replicas: Int?) {
        var commands = calls
        if durability.replicas > 0 {
            commands.append(RedisCommand("WAIT", arguments: [durability.replicas, durability.timeoutMilliseconds], keysAt: []).blocking())
        }
        let replies = try await redis.pipeline(commands)
        guard replies.count == commands.count else {
            throw RedisError.protocolError("\(name): \(commands.count) commands pipelined, \(replies.count) replies")
        }
        guard durability.replicas > 0 else { return (replies, nil) }
        guard let acknowledged = replies.last?.int else {
            throw RedisError.protocolError("\(name): WAIT answered \(String(describing: replies.last))")
        }
        return (Array(replies.dropLast()), Int(acknowledged))
    }

    /// The `FCALL` of one of ``functions`` as a command, for pipelines (see ``isMissingFunction(_:)``).
    package func command(_ short: String, keys: [[UInt8]], arguments: [[UInt8]]) -> RedisCommand {
        RedisCommand(
            arguments: [Array("FCALL".utf8), Array(function(short).utf8), Array(String(keys.count).utf8)] + keys + arguments,
            keyIndices: 3..<(3 + keys.count))
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

/// How many replicas must have a write before it counts (`WAIT replicas timeout` after it,
/// `TOLLGATE_REDIS_WAIT_REPLICAS` and `TOLLGATE_REDIS_WAIT_TIMEOUT_MS`); zero replicas: no `WAIT`.
package struct RedisDurability: Sendable, Hashable {
    package var replicas: Int
    package var timeoutMilliseconds: Int

    package init(replicas: Int = 0, timeoutMilliseconds: Int = 1000) {
        self.replicas = replicas
        self.timeoutMilliseconds = timeoutMilliseconds
    }

    /// Whether `acknowledged` replicas are enough.
    package func isMet(by acknowledged: Int?) -> Bool {
        replicas == 0 || (acknowledged ?? 0) >= replicas
    }
}
