extension RedisCommandExecutor {
    /// `XADD stream [NOMKSTREAM] id field value…`; returns the entry ID, or nil when `noMakeStream` is set
    /// and the stream does not exist.
    package func xadd(
        _ stream: String, id: String = "*", fields: [(String, [UInt8])], noMakeStream: Bool = false
    ) async throws -> String? {
        var arguments: [any RedisArgumentConvertible] = [stream]
        if noMakeStream { arguments.append("NOMKSTREAM") }
        arguments.append(id)
        for (name, value) in fields {
            arguments.append(name)
            arguments.append(value)
        }
        let reply = try await send(RedisCommand("XADD", arguments: arguments, keysAt: [0]))
        if reply.isNull { return nil }
        guard let entryID = reply.string else { throw RedisError.protocolError("XADD returned \(reply)") }
        return entryID
    }

    /// `XGROUP CREATE stream group startID [MKSTREAM]`; returns false if the group already exists (BUSYGROUP).
    package func xgroupCreate(
        _ stream: String, group: String, startID: String = "0", makeStream: Bool = true
    ) async throws -> Bool {
        var arguments: [any RedisArgumentConvertible] = ["CREATE", stream, group, startID]
        if makeStream { arguments.append("MKSTREAM") }
        do {
            _ = try await send(RedisCommand("XGROUP", arguments: arguments, keysAt: [1]))
            return true
        } catch RedisError.server(code: "BUSYGROUP", _) {
            return false
        }
    }

    /// `XREADGROUP GROUP g c COUNT n [BLOCK ms] STREAMS s id`. The socket timeout for this call is
    /// `block + commandTimeout` (`BLOCK 0` waits forever). Returns [] on timeout (nil reply).
    /// Use id `>` for new entries, `0` for this consumer's own pending ones.
    package func xreadgroup(
        group: String, consumer: String, stream: String, id: String = ">", count: Int, block: Duration?
    ) async throws -> [StreamEntry] {
        var arguments: [any RedisArgumentConvertible] = ["GROUP", group, consumer, "COUNT", count]
        var timeout: Duration?
        if let block {
            arguments += ["BLOCK", block.milliseconds]
            timeout = block == .zero ? .zero : block + commandTimeout
        }
        arguments += ["STREAMS", stream, id]
        var command = RedisCommand("XREADGROUP", arguments: arguments, keysAt: [arguments.count - 2])
        if block != nil { command = command.blocking() }
        let reply = try await send(command, timeout: timeout)
        if reply.isNull { return [] }
        guard let streams = reply.array else { throw RedisError.protocolError("XREADGROUP returned \(reply)") }
        var entries: [StreamEntry] = []
        for item in streams {
            guard let pair = item.array, pair.count == 2 else {
                throw RedisError.protocolError("XREADGROUP stream item is not [name, entries]")
            }
            entries += try StreamEntry.list(pair[1])
        }
        return entries
    }

    /// `XACK stream group id…`; returns how many were acknowledged (0 without sending if `ids` is empty).
    package func xack(_ stream: String, group: String, ids: [String]) async throws -> Int {
        if ids.isEmpty { return 0 }
        return try await integer(RedisCommand("XACK", arguments: [stream, group] + ids, keysAt: [0]))
    }

    /// `XAUTOCLAIM stream group consumer min-idle start COUNT n` (Redis 7 three-element reply).
    package func xautoclaim(
        _ stream: String, group: String, consumer: String, minIdle: Duration, start: String = "0-0", count: Int
    ) async throws -> AutoClaimResult {
        let reply = try await send(
            RedisCommand("XAUTOCLAIM", key: stream, group, consumer, minIdle.milliseconds, start, "COUNT", count))
        guard let parts = reply.array, parts.count >= 2, let next = parts[0].string else {
            throw RedisError.protocolError("XAUTOCLAIM returned \(reply)")
        }
        // Redis 6.2 listed deleted entries as nil items; Redis 7 moves them to the third element.
        let entries = try (parts[1].array ?? []).filter { !$0.isNull }.map(StreamEntry.init(reply:))
        let deleted = parts.count > 2 ? (parts[2].array ?? []).compactMap(\.string) : []
        return AutoClaimResult(nextStart: next, entries: entries, deletedIDs: deleted)
    }

    /// The summary form `XPENDING stream group`.
    package func xpendingSummary(_ stream: String, group: String) async throws -> PendingSummary {
        let reply = try await send(RedisCommand("XPENDING", key: stream, group))
        guard let parts = reply.array, parts.count == 4, let count = parts[0].int else {
            throw RedisError.protocolError("XPENDING summary returned \(reply)")
        }
        var consumers: [String: Int] = [:]
        for item in parts[3].array ?? [] {
            guard let pair = item.array, pair.count == 2, let name = pair[0].string, let pending = pair[1].int else {
                throw RedisError.protocolError("XPENDING consumer item is not [name, count]")
            }
            consumers[name] = Int(pending)
        }
        return PendingSummary(
            count: Int(count), smallestID: parts[1].string, largestID: parts[2].string,
            consumers: consumers)
    }

    /// The extended form `XPENDING stream group [IDLE ms] start end count [consumer]`.
    package func xpending(
        _ stream: String, group: String, start: String = "-", end: String = "+", count: Int,
        consumer: String? = nil, minIdle: Duration? = nil
    ) async throws -> [PendingEntry] {
        var arguments: [any RedisArgumentConvertible] = [stream, group]
        if let minIdle { arguments += ["IDLE", minIdle.milliseconds] }
        arguments += [start, end, count]
        if let consumer { arguments.append(consumer) }
        let reply = try await send(RedisCommand("XPENDING", arguments: arguments, keysAt: [0]))
        guard let rows = reply.array else { throw RedisError.protocolError("XPENDING returned \(reply)") }
        return try rows.map { row in
            guard let fields = row.array, fields.count == 4, let id = fields[0].string,
                let owner = fields[1].string, let idle = fields[2].int, let deliveries = fields[3].int
            else {
                throw RedisError.protocolError("XPENDING row is not [id, consumer, idle, deliveries]")
            }
            return PendingEntry(id: id, consumer: owner, idle: .milliseconds(idle), deliveryCount: Int(deliveries))
        }
    }

    /// `XINFO GROUPS stream`.
    package func xinfoGroups(_ stream: String) async throws -> [StreamGroupInfo] {
        let reply = try await send(RedisCommand("XINFO", arguments: ["GROUPS", stream], keysAt: [1]))
        guard let groups = reply.array else { throw RedisError.protocolError("XINFO GROUPS returned \(reply)") }
        return try groups.map(StreamGroupInfo.init(reply:))
    }

    /// `XTRIM stream MINID [~] minID`; returns how many entries were removed.
    package func xtrimMinID(_ stream: String, minID: String, approximate: Bool = false) async throws -> Int {
        try await integer(RedisCommand("XTRIM", key: stream, "MINID", approximate ? "~" : "=", minID))
    }

    /// `XRANGE stream start end [COUNT n]`.
    package func xrange(
        _ stream: String, start: String = "-", end: String = "+", count: Int? = nil
    ) async throws -> [StreamEntry] {
        var arguments: [any RedisArgumentConvertible] = [stream, start, end]
        if let count { arguments += ["COUNT", count] }
        return try StreamEntry.list(try await send(RedisCommand("XRANGE", arguments: arguments, keysAt: [0])))
    }

    /// `XLEN stream`.
    package func xlen(_ stream: String) async throws -> Int {
        try await integer(RedisCommand("XLEN", key: stream))
    }

    private func integer(_ command: RedisCommand) async throws -> Int {
        let reply = try await send(command)
        guard case .integer(let value) = reply else {
            throw RedisError.protocolError("\(command.name) returned \(reply) instead of an integer")
        }
        return Int(value)
    }
}
