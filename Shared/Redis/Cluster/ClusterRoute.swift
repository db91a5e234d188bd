/// Where a cluster client sends one command, from the command's keys: the keys it declares
/// (``RedisCommand/keyIndices``, set by whoever builds it), else — for a command built by name only, a test's or an
/// operator's — a table of the commands Tollgate sends (see `Shared/Redis/README.md`, "Cluster").
package enum ClusterRoute: Sendable, Hashable {
    /// Every key is in this slot: the slot's primary.
    case slot(Int)
    /// No keys (`PING`, `INFO`, `PUBLISH`, …), or an undeclared command the table does not know: any primary (a
    /// command with keys that the table does not know is then redirected by the node's `MOVED`).
    case anyPrimary
    /// Per-node state every primary must have (`FUNCTION LOAD`, `FUNCTION DELETE`, `FUNCTION FLUSH`,
    /// `SCRIPT LOAD`, `FLUSHALL`): sent to every primary.
    case everyPrimary

    /// The route of `command`; throws ``RedisError/crossSlot(_:)`` when its keys hash to different slots.
    package static func of(_ command: RedisCommand) throws -> ClusterRoute {
        let name = command.name
        if let subcommand = everyPrimaryCommands[name] {
            let second = command.arguments.count > 1 ? String(decoding: command.arguments[1], as: UTF8.self).uppercased() : ""
            if subcommand.isEmpty || subcommand.contains(second) { return .everyPrimary }
        }
        let keys = keys(of: command)
        guard let first = keys.first else { return .anyPrimary }
        let slot = ClusterKeySlot.slot(first)
        for key in keys.dropFirst() where ClusterKeySlot.slot(key) != slot {
            throw RedisError.crossSlot("\(name) keys hash to slots \(slot) and \(ClusterKeySlot.slot(key))")
        }
        return .slot(slot)
    }

    /// The keys of `command`: those it declares, else those the table finds; empty for commands without keys or
    /// neither declared nor in the table.
    package static func keys(of command: RedisCommand) -> [[UInt8]] {
        command.declaredKeys ?? tableKeys(of: command) ?? []
    }

    /// The keys of `command` by the table of command names, nil for a command the table does not know.
    ///
    /// Kept as the fallback for commands built by name only: every command the services, the libraries and `tollctl`
    /// send declares its keys (the ledger tests refuse one that does not: `CheckedExecutor`, `.declaredKeys`), but the tests build
    /// several hundred by name (`send("HSET", …)`, `RedisCommand("ZADD", …)`, `MULTI` blocks) to seed and inspect
    /// what they run against a cluster, and an operator may pass one through. Routed by no keys, such a command would
    /// go to any primary and cost a `MOVED` round trip — or, inside a `MULTI … EXEC` block, lose the block's slot.
    /// `CheckedExecutor` (`.sameSlot`) (the single-server tests) checks that declared keys agree with this table wherever the
    /// table knows the command.
    package static func tableKeys(of command: RedisCommand) -> [[UInt8]]? {
        let arguments = command.arguments
        let name = command.name
        switch name {
        case "DEL", "EXISTS", "UNLINK", "TOUCH", "MGET", "WATCH":
            return Array(arguments.dropFirst())
        case "MSET", "MSETNX":
            return stride(from: 1, to: arguments.count, by: 2).map { arguments[$0] }
        case "RENAME", "RENAMENX", "SMOVE", "LMOVE", "RPOPLPUSH", "BLMOVE", "BRPOPLPUSH", "COPY":
            return Array(arguments.dropFirst().prefix(2))
        case "BLPOP", "BRPOP", "BZPOPMIN", "BZPOPMAX":
            return arguments.count > 2 ? Array(arguments[1..<(arguments.count - 1)]) : []
        case "XINFO", "XGROUP", "OBJECT", "MEMORY":
            // XINFO STREAM key, XGROUP CREATE key …, OBJECT ENCODING key, MEMORY USAGE key; HELP has none.
            return arguments.count > 2 ? [arguments[2]] : []
        case "XREAD", "XREADGROUP":
            return streamsKeys(arguments)
        case "FCALL", "FCALL_RO", "EVAL", "EVALSHA", "EVAL_RO", "EVALSHA_RO":
            guard arguments.count > 2, let count = Int(String(decoding: arguments[2], as: UTF8.self)), count >= 0,
                arguments.count >= 3 + count
            else { return [] }
            return Array(arguments[3..<(3 + count)])
        default:
            guard firstKey.contains(name) else { return nil }
            return arguments.count > 1 ? [arguments[1]] : []
        }
    }

    /// `XREAD[GROUP] … STREAMS k1 k2 … id1 id2 …`: the first half of what follows `STREAMS`.
    private static func streamsKeys(_ arguments: [[UInt8]]) -> [[UInt8]] {
        let streams = Array("STREAMS".utf8)
        guard let index = arguments.firstIndex(where: { $0.count == streams.count && Array($0.map(upper)) == streams })
        else { return [] }
        let rest = arguments[(index + 1)...]
        return Array(rest.prefix(rest.count / 2))
    }

    private static func upper(_ byte: UInt8) -> UInt8 {
        byte >= 0x61 && byte <= 0x7A ? byte - 0x20 : byte
    }

    /// Commands whose only key is their first argument.
    private static let firstKey: Set<String> = [
        "GET", "SET", "SETNX", "SETEX", "PSETEX", "GETSET", "GETDEL", "GETEX", "INCR", "INCRBY", "DECR", "DECRBY",
        "INCRBYFLOAT", "APPEND", "STRLEN", "EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT", "TTL", "PTTL", "PERSIST",
        "TYPE", "DUMP", "RESTORE", "HGET", "HSET", "HSETNX", "HMSET", "HGETALL", "HMGET", "HDEL", "HINCRBY",
        "HEXISTS", "HLEN", "HKEYS", "HVALS", "HSCAN", "ZADD", "ZREM", "ZSCORE", "ZMSCORE", "ZCARD", "ZRANGE",
        "ZRANGEBYSCORE", "ZREVRANGE", "ZREVRANGEBYSCORE", "ZREMRANGEBYSCORE", "ZREMRANGEBYRANK", "ZRANK", "ZCOUNT",
        "ZINCRBY", "ZPOPMIN", "ZPOPMAX", "ZSCAN", "LPUSH", "RPUSH", "LPOP", "RPOP", "LRANGE", "LLEN", "LREM",
        "LTRIM", "LINDEX", "LSET", "SADD", "SREM", "SMEMBERS", "SISMEMBER", "SCARD", "SSCAN", "XADD", "XRANGE",
        "XREVRANGE", "XLEN", "XACK", "XCLAIM", "XAUTOCLAIM", "XPENDING", "XDEL", "XTRIM", "XSETID",
    ]

    /// Commands sent to every primary, with the subcommands that are (empty: any).
    private static let everyPrimaryCommands: [String: Set<String>] = [
        "FUNCTION": ["LOAD", "DELETE", "FLUSH", "RESTORE"], "SCRIPT": ["LOAD", "FLUSH"], "FLUSHALL": [],
        "FLUSHDB": [],
    ]
}
