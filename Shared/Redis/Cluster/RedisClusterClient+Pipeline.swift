import Synchronization

extension RedisClusterClient {
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
    ///
    /// The split, the meaning of each reply and the `WAIT` targets are decided without I/O by ``ClusterRouter`` and
    /// ``ClusterPipeline``; this sends where they say.
    package func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        if commands.isEmpty { return [] }
        if commands.contains(where: \.arguments.isEmpty) { throw RedisError.protocolError("empty command") }
        if let wait = ClusterPipeline.trailingWait(commands) {
            let written = try await send(ClusterPipeline(Array(commands.dropLast())))
            var fewest: Int64?
            for node in written.waitTargets {
                let reply = try await connection(to: node).send(wait, timeout: nil)
                guard let acknowledged = reply.int else { return written.orderedReplies + [reply] }
                fewest = min(fewest ?? acknowledged, acknowledged)
            }
            return written.orderedReplies + [.integer(fewest ?? 0)]
        }
        return try await send(ClusterPipeline(commands)).orderedReplies
    }

    /// Sends `pipeline` (without a trailing `WAIT`): its parts concurrently, then again what must be sent again.
    private func send(_ pipeline: ClusterPipeline) async throws -> ClusterPipeline {
        var pipeline = pipeline
        let parts = try await split(pipeline.units)
        var unsent: [(node: Endpoint, units: [ClusterPipeline.Unit])] = []
        try await withThrowingTaskGroup(of: (Endpoint, [ClusterPipeline.Unit], [RedisReply]?).self) { group in
            for (node, nodeUnits) in parts {
                let part = pipeline.commands(of: nodeUnits)
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
                try pipeline.record(part, for: nodeUnits, from: node)
            }
        }
        for (node, nodeUnits) in unsent {
            state.withLock { $0.router.partUnreachable(node) }
            for unit in nodeUnits {
                if unit.isTransaction {
                    let (target, part) = try await sendUnsentTransaction(
                        pipeline.commands(of: [unit]), route: unit.route, from: node)
                    try pipeline.record(part, for: [unit], from: target)
                    continue
                }
                for index in unit.indices {
                    try await resend(index, of: &pipeline, route: unit.route, start: .route)
                }
            }
        }
        for unit in pipeline.units where !unit.isTransaction {
            for index in unit.indices {
                guard case .error(let text) = pipeline.replies[index], let node = pipeline.sentTo[index] else { continue }
                let command = pipeline.commands[index]
                let start: Start
                switch state.withLock({ $0.router.pipelinedError(text, of: command, from: node) }) {
                case .keep:
                    continue
                case .resend(let next):
                    if case .node = next { scheduleRefresh(force: false) }
                    start = next
                case .resendAfter(let delay):
                    try await Task.sleep(for: delay)
                    start = .route
                case .reloadLibraries:
                    guard try await reloadLibraries(on: node) else { continue }
                    start = .node(node)
                }
                try await resend(index, of: &pipeline, route: unit.route, start: start)
            }
        }
        for unit in pipeline.units where unit.isTransaction {
            try await resendRefusedTransaction(unit, of: &pipeline)
        }
        return pipeline
    }

    /// The parts of a pipeline by node, reading the slot map first when there is none yet.
    private func split(_ units: [ClusterPipeline.Unit]) async throws -> [(node: Endpoint, units: [ClusterPipeline.Unit])] {
        if let parts = state.withLock({ $0.router.split(units) }) { return parts }
        _ = try await refresh()
        guard let parts = state.withLock({ $0.router.split(units) }) else {
            throw RedisError.connectionFailed("the cluster has no primary serving slots")
        }
        return parts
    }

    /// A block refused whole (a queued command, or `EXEC` itself, answered `MOVED`, `TRYAGAIN` or `CLUSTERDOWN`, and
    /// `EXEC` discarded the block): nothing ran, so the block is sent again whole, to the new primary after a `MOVED`,
    /// after a backoff within the retry window otherwise.
    private func resendRefusedTransaction(_ unit: ClusterPipeline.Unit, of pipeline: inout ClusterPipeline) async throws {
        var request = ClusterRequest(route: unit.route, deadline: .now + retryWindow)
        var hops = 0
        while let refusal = pipeline.transactionRefusal(of: unit) {
            let target: Endpoint
            switch refusal {
            case .moved(let redirect):
                hops += 1
                guard hops <= maxRedirections, case .node(let endpoint) = follow(redirect) else { return }
                target = endpoint
            case .refused(let code):
                countRefusal(code)
                if code == "CLUSTERDOWN" { _ = try? await refresh() }
                guard let delay = request.backOff(now: .now) else { return }
                try await Task.sleep(for: delay)
                target = try await primary(for: unit.route)
            }
            let part = try await connection(to: target).pipeline(pipeline.commands(of: [unit]))
            try pipeline.record(part, for: [unit], from: target)
        }
    }

    /// Sends a `MULTI … EXEC` block that was never sent (its node could not be reached) whole to its slot's primary
    /// after a map refresh, with a backoff until the retry window has passed (a failover: the promoted replica).
    private func sendUnsentTransaction(
        _ block: [RedisCommand], route: ClusterRoute, from node: Endpoint
    ) async throws -> (Endpoint, [RedisReply]) {
        var request = ClusterRequest(route: route, deadline: .now + retryWindow)
        var lastError = RedisError.connectionFailed("node \(node) unreachable; its transaction was not sent")
        while true {
            _ = try? await refresh()
            guard let delay = request.backOff(now: .now) else { throw lastError }
            try await Task.sleep(for: delay)
            let target = try await primary(for: route)
            do {
                let part = try await connection(to: target).pipeline(block)
                guard part.count == block.count else {
                    throw RedisError.protocolError("a MULTI block sent again returned \(part.count) replies")
                }
                state.withLock { $0.router.markReachable(target) }
                return (target, part)
            } catch RedisError.connectionFailed(let message) {
                state.withLock { $0.router.partUnreachable(target) }
                lastError = RedisError.connectionFailed(message)
            }
        }
    }

    /// Sends one command of a pipeline again alone (redirected, refused, or its node unreachable), adding the node
    /// that answered to the pipeline's ``ClusterPipeline/waitTargets`` (a trailing `WAIT` must cover it too). Server errors become `.error` replies in
    /// place, as in any pipeline; I/O errors are thrown.
    private func resend(_ index: Int, of pipeline: inout ClusterPipeline, route: ClusterRoute, start: Start) async throws {
        var landedOn: Endpoint?
        defer { if let landedOn { pipeline.landed(on: landedOn) } }
        do {
            pipeline.record(
                try await execute(pipeline.commands[index], route: route, timeout: nil, start: start, landedOn: &landedOn), at: index)
        } catch RedisError.server(_, let message) {
            pipeline.record(.error(message), at: index)
        }
    }
}
