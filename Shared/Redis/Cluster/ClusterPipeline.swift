/// A pipeline on a Redis Cluster as a value: its commands grouped into units (one command, or a whole
/// `MULTI … EXEC` block, each with its route), the replies gathered so far with the node that gave each, and the
/// nodes a trailing `WAIT` must go to. ``RedisClusterClient/pipeline(_:)`` sends; this keeps the books, without I/O
/// (`ClusterRouterTests`).
package struct ClusterPipeline: Sendable {
    package typealias Endpoint = RedisConfiguration.Endpoint

    /// Consecutive commands that go to one node together: one command, or a whole `MULTI … EXEC` block.
    package struct Unit: Sendable, Hashable {
        package var indices: Range<Int>
        package var route: ClusterRoute
        package var isTransaction: Bool

        package init(indices: Range<Int>, route: ClusterRoute, isTransaction: Bool) {
            self.indices = indices
            self.route = route
            self.isTransaction = isTransaction
        }
    }

    /// Why a node refused a whole `MULTI … EXEC` block for a cluster reason (nothing in it ran).
    package enum TransactionRefusal: Sendable, Hashable {
        case moved(ClusterRedirect)
        case refused(String)
    }

    package let commands: [RedisCommand]
    package let units: [Unit]
    /// Per command, its reply (nil until one arrived).
    package private(set) var replies: [RedisReply?]
    /// Per command, the node that answered it.
    package private(set) var sentTo: [Endpoint?]
    /// Every node that answered at least one command, in the order they first did — where a trailing `WAIT` goes: a
    /// node that answered a command sent again after a redirection counts, a node nothing reached never does.
    package private(set) var waitTargets: [Endpoint] = []

    /// Groups `commands` into units; throws ``RedisError/crossSlot(_:)`` for a `MULTI … EXEC` block over several
    /// slots and ``RedisError/protocolError(_:)`` for a command every primary must run.
    package init(_ commands: [RedisCommand]) throws {
        self.commands = commands
        units = try Self.units(commands)
        replies = Array(repeating: nil, count: commands.count)
        sentTo = Array(repeating: nil, count: commands.count)
    }

    /// The commands of `units`, in order: one node's part.
    package func commands(of units: [Unit]) -> [RedisCommand] {
        units.flatMap { commands[$0.indices] }
    }

    /// `node` answered `part` for the commands of `units`, in order.
    package mutating func record(_ part: [RedisReply], for units: [Unit], from node: Endpoint) throws {
        let indices = units.flatMap { Array($0.indices) }
        guard part.count == indices.count else {
            throw RedisError.protocolError("a pipeline of \(indices.count) commands returned \(part.count) replies")
        }
        for (reply, index) in zip(part, indices) {
            replies[index] = reply
            sentTo[index] = node
        }
        landed(on: node)
    }

    /// A command sent again alone got `reply` (a server error in place of a reply, as in any pipeline).
    package mutating func record(_ reply: RedisReply, at index: Int) {
        guard replies.indices.contains(index) else { return }
        replies[index] = reply
    }

    /// `node` answered something of this pipeline (a command sent again alone): a trailing `WAIT` covers it.
    package mutating func landed(on node: Endpoint) {
        if !waitTargets.contains(node) { waitTargets.append(node) }
    }

    /// The replies in order (`.null` where none came, which the client never leaves).
    package var orderedReplies: [RedisReply] { replies.map { $0 ?? .null } }

    /// Why `unit`'s node refused the whole block, when it did for a cluster reason: `EXEC` answered `EXECABORT` after
    /// a queued command answered `MOVED`, `TRYAGAIN` or `CLUSTERDOWN`, or `EXEC` itself answered one of those (the
    /// node then discards the block). Nil when the block ran, failed for anything else, or was refused by `ASK`
    /// (left as it is).
    package func transactionRefusal(of unit: Unit) -> TransactionRefusal? {
        guard let node = sentTo[unit.indices.lowerBound] else { return nil }
        return Self.transactionRefusal(unit.indices.map { replies[$0] }, from: node)
    }

    static func transactionRefusal(_ replies: [RedisReply?], from node: Endpoint) -> TransactionRefusal? {
        guard let final = replies.last ?? nil, case .error(let last) = final else { return nil }
        let causes: [RedisReply?] = last.hasPrefix("EXECABORT") ? Array(replies.dropLast()) : [final]
        for case .error(let text)? in causes {
            let error = RedisError.fromErrorReply(text)
            if let redirect = ClusterRedirect(error, from: node) {
                return redirect.kind == .moved ? .moved(redirect) : nil
            }
            if case .server(let code, _) = error, code == "TRYAGAIN" || code == "CLUSTERDOWN" { return .refused(code) }
        }
        return nil
    }

    /// The `WAIT` a durable write ends with (`WAIT numreplicas timeout` as the last of several commands): sent to
    /// every node in ``waitTargets`` after the rest, since a `WAIT` covers only its own connection's writes.
    package static func trailingWait(_ commands: [RedisCommand]) -> RedisCommand? {
        guard commands.count > 1, let wait = commands.last, wait.name == "WAIT" else { return nil }
        return wait
    }

    private static func units(_ commands: [RedisCommand]) throws -> [Unit] {
        var units: [Unit] = []
        var index = 0
        while index < commands.count {
            if commands[index].name == "MULTI" {
                var end = index + 1
                while end < commands.count, commands[end].name != "EXEC", commands[end].name != "DISCARD" { end += 1 }
                end = min(end + 1, commands.count)
                var route = ClusterRoute.anyPrimary
                for command in commands[index..<end] {
                    let inner = try ClusterRoute.of(command)
                    guard case .slot(let slot) = inner else { continue }
                    if case .slot(let current) = route, current != slot {
                        throw RedisError.crossSlot("a MULTI block spans slots \(current) and \(slot)")
                    }
                    route = inner
                }
                units.append(Unit(indices: index..<end, route: route, isTransaction: true))
                index = end
                continue
            }
            let route = try ClusterRoute.of(commands[index])
            if route == .everyPrimary {
                throw RedisError.protocolError("\(commands[index].name) runs on every primary; send it alone, not in a pipeline")
            }
            units.append(Unit(indices: index..<(index + 1), route: route, isTransaction: false))
            index += 1
        }
        return units
    }
}
