import Synchronization

extension RedisClusterClient {
    /// Consecutive commands that go to one node together: one command, or a whole `MULTI … EXEC` block.
    struct PipelineUnit {
        var indices: Range<Int>
        var route: ClusterRoute
        var isTransaction: Bool
    }

    /// Splits the pipeline per node (order kept per node, a `MULTI … EXEC` block kept together and refused when
    /// its keys span slots), sends the parts concurrently, and merges the replies back in order. A reply that is
    /// a redirection, `TRYAGAIN`, `CLUSTERDOWN` or `Function not found` (none ran) is replaced by sending that
    /// command again alone, as ``send(_:timeout:)`` would; a `MULTI … EXEC` block refused whole for one of those
    /// (`EXECABORT`, or `EXEC`'s own refusal: nothing ran) is sent again whole (an `ASK` inside one is left as it is). A node that
    /// could not be reached (nothing sent there) gets its commands sent again one by one after a map refresh, and its
    /// `MULTI … EXEC` blocks whole, with a backoff within the retry window.
    /// An I/O failure after sending throws ``RedisError/unknownOutcome(_:)``, as with one server.
    ///
    /// A `WAIT` as the pipeline's last command (a durable write: `WAIT numreplicas timeout`) waits on every node the
    /// pipeline wrote to — a `WAIT` covers only the writes of its own connection, so one per node — and its reply is
    /// the fewest replicas any of them acknowledged, including the nodes that answered commands sent again alone (a
    /// redirection mid-pipeline, a node unreachable).
    package func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        if commands.isEmpty { return [] }
        if commands.contains(where: \.arguments.isEmpty) { throw RedisError.protocolError("empty command") }
        if commands.count > 1, let wait = commands.last, wait.name == "WAIT" {
            let written = try await pipelineNodes(Array(commands.dropLast()))
            var fewest: Int64?
            for node in written.nodes {
                let reply = try await connection(to: node).send(wait, timeout: nil)
                guard let acknowledged = reply.int else { return written.replies + [reply] }
                fewest = min(fewest ?? acknowledged, acknowledged)
            }
            return written.replies + [.integer(fewest ?? 0)]
        }
        return try await pipelineNodes(commands).replies
    }

    /// ``pipeline(_:)`` without the `WAIT`: the replies, and every node a command was sent to.
    private func pipelineNodes(_ commands: [RedisCommand]) async throws -> (replies: [RedisReply], nodes: [Endpoint]) {
        var touched: [Endpoint] = []
        let units = try Self.units(commands)
        var groups: [Endpoint: [PipelineUnit]] = [:]
        var order: [Endpoint] = []
        for unit in units {
            let node = try await primary(for: unit.route)
            if groups[node] == nil { order.append(node) }
            groups[node, default: []].append(unit)
        }
        var replies = [RedisReply?](repeating: nil, count: commands.count)
        var sentTo = [Endpoint?](repeating: nil, count: commands.count)
        var unsent: [(Endpoint, [PipelineUnit])] = []
        try await withThrowingTaskGroup(of: (Endpoint, [PipelineUnit], [RedisReply]?).self) { group in
            for node in order {
                let nodeUnits = groups[node] ?? []
                let part = nodeUnits.flatMap { commands[$0.indices] }
                let connection = try self.connection(to: node)
                group.addTask {
                    do {
                        return (node, nodeUnits, try await connection.pipeline(part))
                    } catch RedisError.connectionFailed {
                        return (node, nodeUnits, nil)
                    }
                }
            }
            for try await (node, nodeUnits, part) in group {
                guard let part else {
                    // Nothing reached it: its commands are sent elsewhere below, and no WAIT goes to it.
                    unsent.append((node, nodeUnits))
                    continue
                }
                if !touched.contains(node) { touched.append(node) }
                var position = 0
                for unit in nodeUnits {
                    for index in unit.indices {
                        replies[index] = part[position]
                        sentTo[index] = node
                        position += 1
                    }
                }
            }
        }
        for (node, nodeUnits) in unsent {
            state.withLock {
                $0.counters.unreachable += 1
                $0.unreachable.insert(node)
            }
            for unit in nodeUnits {
                if unit.isTransaction {
                    let (target, part) = try await sendUnsentTransaction(Array(commands[unit.indices]), route: unit.route, from: node)
                    if !touched.contains(target) { touched.append(target) }
                    for (offset, index) in unit.indices.enumerated() {
                        replies[index] = part[offset]
                        sentTo[index] = target
                    }
                    continue
                }
                for index in unit.indices {
                    replies[index] = try await resend(commands[index], route: unit.route, start: .route, touched: &touched)
                }
            }
        }
        for unit in units where !unit.isTransaction {
            for index in unit.indices {
                guard case .error(let text) = replies[index], let node = sentTo[index],
                    let start = try await resendStart(commands[index], text, from: node)
                else { continue }
                replies[index] = try await resend(commands[index], route: unit.route, start: start, touched: &touched)
            }
        }
        for unit in units where unit.isTransaction {
            // A block refused whole (a queued command, or `EXEC` itself, answered `MOVED`, `TRYAGAIN` or `CLUSTERDOWN`,
            // and `EXEC` discarded the block): nothing ran, so the block is sent again whole, to the new primary after
            // a `MOVED`, after a backoff within the retry window otherwise.
            let deadline = ContinuousClock.now + retryWindow
            var hops = 0
            var backoff = ReconnectBackoff()
            backoff.base = .milliseconds(10)
            backoff.cap = .milliseconds(200)
            resend: while let node = sentTo[unit.indices.lowerBound] {
                let target: Endpoint
                switch Self.transactionRefusal(unit.indices.map { replies[$0] }, from: node) {
                case nil:
                    break resend
                case .moved(let redirect):
                    hops += 1
                    guard hops <= maxRedirections, case .node(let endpoint) = follow(redirect) else { break resend }
                    target = endpoint
                case .refused(let code):
                    countRefusal(code)
                    if code == "CLUSTERDOWN" { _ = try? await refresh() }
                    backoff.recordFailure()
                    let delay = backoff.delay()
                    guard ContinuousClock.now + delay < deadline else { break resend }
                    try await Task.sleep(for: delay)
                    target = try await primary(for: unit.route)
                }
                let part = try await connection(to: target).pipeline(Array(commands[unit.indices]))
                guard part.count == unit.indices.count else {
                    throw RedisError.protocolError("a MULTI block sent again returned \(part.count) replies")
                }
                if !touched.contains(target) { touched.append(target) }
                for (offset, index) in unit.indices.enumerated() {
                    replies[index] = part[offset]
                    sentTo[index] = target
                }
            }
        }
        return (replies.map { $0 ?? .null }, touched)
    }

    /// Sends a `MULTI … EXEC` block that was never sent (its node could not be reached) whole to its slot's primary
    /// after a map refresh, with a backoff until the retry window has passed (a failover: the promoted replica).
    private func sendUnsentTransaction(
        _ block: [RedisCommand], route: ClusterRoute, from node: Endpoint
    ) async throws -> (Endpoint, [RedisReply]) {
        let deadline = ContinuousClock.now + retryWindow
        var backoff = ReconnectBackoff()
        backoff.base = .milliseconds(10)
        backoff.cap = .milliseconds(200)
        var lastError = RedisError.connectionFailed("node \(node) unreachable; its transaction was not sent")
        while true {
            _ = try? await refresh()
            backoff.recordFailure()
            let delay = backoff.delay()
            guard ContinuousClock.now + delay < deadline else { throw lastError }
            try await Task.sleep(for: delay)
            let target = try await primary(for: route)
            do {
                let part = try await connection(to: target).pipeline(block)
                guard part.count == block.count else {
                    throw RedisError.protocolError("a MULTI block sent again returned \(part.count) replies")
                }
                state.withLock { _ = $0.unreachable.remove(target) }
                return (target, part)
            } catch RedisError.connectionFailed(let message) {
                state.withLock {
                    $0.counters.unreachable += 1
                    $0.unreachable.insert(target)
                }
                lastError = RedisError.connectionFailed(message)
            }
        }
    }

    /// Why a node refused a whole `MULTI … EXEC` block, when it did for a cluster reason: `EXEC` answered
    /// `EXECABORT` after a queued command answered `MOVED`, `TRYAGAIN` or `CLUSTERDOWN`, or `EXEC` itself answered
    /// one of those (the node then discards the block). Nil when the block ran, or failed for anything else.
    enum TransactionRefusal {
        case moved(ClusterRedirect)
        case refused(String)
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

    /// Where to send again a pipelined command whose reply was `text`, or nil to keep the reply.
    private func resendStart(_ command: RedisCommand, _ text: String, from node: Endpoint) async throws -> Start? {
        let error = RedisError.fromErrorReply(text)
        guard case .server(let code, _) = error else { return nil }
        if let redirect = ClusterRedirect(error, from: node) {
            // The node checked the slot first: the command did not run.
            return follow(redirect)
        }
        if Self.isFunctionCall(command), RedisFunctionLibrary.isMissingFunction(text), try await reloadLibraries(on: node) {
            return .node(node)
        }
        if code == "TRYAGAIN" || code == "CLUSTERDOWN" {
            countRefusal(code)
            try await Task.sleep(for: .milliseconds(10))
            return .route
        }
        return nil
    }

    /// Sends one command of a pipeline again alone (redirected, refused, or its node unreachable), adding the node
    /// that answered to `touched` (a trailing `WAIT` must cover it too). Server errors become `.error` replies in
    /// place, as in any pipeline; I/O errors are thrown.
    private func resend(
        _ command: RedisCommand, route: ClusterRoute, start: Start, touched: inout [Endpoint]
    ) async throws -> RedisReply {
        var landedOn: Endpoint?
        defer { if let landedOn, !touched.contains(landedOn) { touched.append(landedOn) } }
        do {
            return try await execute(command, route: route, timeout: nil, start: start, landedOn: &landedOn)
        } catch RedisError.server(_, let message) {
            return .error(message)
        }
    }

    /// Groups the pipeline into units, each with its route; throws ``RedisError/crossSlot(_:)`` for a
    /// transaction over several slots and ``RedisError/protocolError(_:)`` for a command every primary must run.
    static func units(_ commands: [RedisCommand]) throws -> [PipelineUnit] {
        var units: [PipelineUnit] = []
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
                units.append(PipelineUnit(indices: index..<end, route: route, isTransaction: true))
                index = end
                continue
            }
            let route = try ClusterRoute.of(commands[index])
            if route == .everyPrimary {
                throw RedisError.protocolError("\(commands[index].name) runs on every primary; send it alone, not in a pipeline")
            }
            units.append(PipelineUnit(indices: index..<(index + 1), route: route, isTransaction: false))
            index += 1
        }
        return units
    }
}
