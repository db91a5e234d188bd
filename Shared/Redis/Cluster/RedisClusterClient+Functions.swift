import Logging
import Synchronization

extension RedisClusterClient {
    /// Sends a command every primary must run (``ClusterRoute/everyPrimary``) to each primary in turn and
    /// returns the first primary's reply; the first error is thrown (nothing is retried: loading a library is
    /// idempotent, so the caller may simply load again). `FUNCTION LOAD` is remembered (and
    /// `FUNCTION DELETE`/`FLUSH` forgotten), so a node that lost its libraries gets them again.
    func sendToEveryPrimary(_ command: RedisCommand, timeout: Duration?) async throws -> RedisReply {
        var map = state.withLock { $0.router.map }
        if map.isEmpty { map = try await refresh() }
        var first: RedisReply?
        for primary in map.allPrimaries {
            // Straight to this primary: a retry by route could land on another one and skip this one.
            let reply = try await connection(to: primary).send(command, timeout: timeout)
            if first == nil { first = reply }
        }
        guard let first else { throw RedisError.connectionFailed("the cluster has no primary serving slots") }
        remember(command)
        return first
    }

    /// Loads every remembered library on `node` (`FUNCTION LOAD REPLACE`); false when there is none to load.
    func reloadLibraries(on node: Endpoint) async throws -> Bool {
        let sources = state.withLock { Array($0.libraries.values) }
        guard !sources.isEmpty else { return false }
        logger.info("reloading redis functions on a cluster node", metadata: ["redis.node": "\(node)"])
        for source in sources {
            let reply = try await connection(to: node).send(RedisCommand("FUNCTION", "LOAD", "REPLACE", source))
            guard reply.string != nil else { throw RedisError.protocolError("FUNCTION LOAD returned \(reply)") }
        }
        state.withLock { $0.router.countFunctionReload() }
        return true
    }

    private func remember(_ command: RedisCommand) {
        guard command.name == "FUNCTION", command.arguments.count >= 2 else { return }
        let words = command.arguments.dropFirst().map { String(decoding: $0, as: UTF8.self) }
        switch words[0].uppercased() {
        case "LOAD":
            guard let source = words.last, let name = Self.libraryName(source) else { return }
            state.withLock { $0.libraries[name] = source }
        case "DELETE":
            guard words.count >= 2 else { return }
            state.withLock { _ = $0.libraries.removeValue(forKey: words[1]) }
        case "FLUSH":
            state.withLock { $0.libraries.removeAll() }
        default:
            return
        }
    }

    /// The `name=` of a library's `#!lua name=…` first line.
    static func libraryName(_ source: String) -> String? {
        guard let line = source.split(separator: "\n", maxSplits: 1).first, line.hasPrefix("#!") else { return nil }
        for word in line.split(separator: " ") where word.hasPrefix("name=") {
            return String(word.dropFirst("name=".count))
        }
        return nil
    }
}
