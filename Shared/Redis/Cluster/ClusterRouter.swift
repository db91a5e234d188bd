/// The Redis Cluster client's routing as a value type: the slot map, the nodes that recently failed, the counters,
/// and every decision that needs no I/O — where a command or a pipeline's part goes, what a reply or an error
/// means and what to do next, which nodes to ask for a new map. ``RedisClusterClient`` holds one under its lock,
/// does the I/O, and asks it; the decisions are unit tested without a server (`ClusterRouterTests`).
///
/// Why each retry is safe is in ``RedisClusterClient`` and `Shared/Redis/README.md` ("Cluster"): `MOVED`, `ASK`,
/// `TRYAGAIN` and `CLUSTERDOWN` mean the node did not run the command, `connectionFailed` that it was never sent;
/// `unknownOutcome` (it may have run) is never sent again.
package struct ClusterRouter: Sendable {
    package typealias Endpoint = RedisConfiguration.Endpoint

    /// What to do after a failed try of one command (``failed(_:on:request:)``).
    package struct Decision: Sendable, Hashable {
        package enum Refresh: Sendable, Hashable {
            case none
            /// Start a refresh without waiting for it: after `MOVED` at most once a second (`force` false), after a
            /// lost connection at once.
            case inBackground(force: Bool)
            /// Read the map, and wait for it, before the backoff (`CLUSTERDOWN`, an unreachable node).
            case beforeNext
        }

        package enum Next: Sendable, Hashable {
            /// Send again now, where ``ClusterRequest/next`` says.
            case send
            /// Wait ``ClusterRequest/backOff(now:)``, then send to the route's primary; throw when it is nil.
            case backOff
            /// Load every remembered library on the node that answered, then send there again; throw the error when
            /// there is none to load.
            case reloadLibraries
            /// Throw the error.
            case fail
        }

        package var refresh: Refresh
        package var next: Next
        /// Drop the connection the try used, so that the next try connects by the map: a ``ClusterReader``'s own
        /// connection, after its node refused as a whole (`CLUSTERDOWN`) or may be gone. Only requests that
        /// ``ClusterRequest/Retries/byCaller`` get it; the client's shared node connections reconnect by themselves.
        package var dropConnection: Bool

        package init(refresh: Refresh = .none, next: Next, dropConnection: Bool = false) {
            self.refresh = refresh
            self.next = next
            self.dropConnection = dropConnection
        }
    }

    /// Per slot, its primary, and each primary's replicas (empty until the first refresh).
    package private(set) var map = ClusterSlotMap()
    /// Nodes that failed to connect recently: asked last for a new map.
    package private(set) var unreachable: Set<Endpoint> = []
    package private(set) var counters = RedisClusterClient.Counters()
    /// Redirections followed for one command before its last error is thrown.
    package let maxRedirections: Int
    private var nextPrimary = 0

    package init(maxRedirections: Int = 5, map: ClusterSlotMap = ClusterSlotMap()) {
        self.maxRedirections = max(maxRedirections, 1)
        self.map = map
    }

    // MARK: Where commands go

    /// The primary for `route` by the map; nil when there is no map yet (read one, then ask again). A slot no
    /// primary serves, and a route to any primary, go to the primaries in turn; that node's `MOVED` or
    /// `CLUSTERDOWN` is then handled like any other.
    package mutating func primary(for route: ClusterRoute) -> Endpoint? {
        if case .slot(let slot) = route, map.primaries.indices.contains(slot), let primary = map.primaries[slot] {
            return primary
        }
        let primaries = map.allPrimaries
        guard !primaries.isEmpty else { return nil }
        nextPrimary += 1
        return primaries[nextPrimary % primaries.count]
    }

    /// Where `request`'s next try goes (`asking`: send `ASKING` first); nil when there is no map yet.
    package mutating func destination(of request: inout ClusterRequest) -> (node: Endpoint, asking: Bool)? {
        switch request.next {
        case .route:
            guard let node = primary(for: request.route) else { return nil }
            return (node, false)
        case .node(let node):
            request.next = .route
            return (node, false)
        case .asking(let node):
            request.next = .route
            return (node, true)
        }
    }

    /// Splits a pipeline's units by node: one part per node, in the order of each node's first unit, each part's
    /// units in pipeline order (so per node, commands keep their order). Nil when there is no map yet.
    package mutating func split(_ units: [ClusterPipeline.Unit]) -> [(node: Endpoint, units: [ClusterPipeline.Unit])]? {
        var parts: [(node: Endpoint, units: [ClusterPipeline.Unit])] = []
        for unit in units {
            guard let node = primary(for: unit.route) else { return nil }
            if let index = parts.firstIndex(where: { $0.node == node }) {
                parts[index].units.append(unit)
            } else {
                parts.append((node, [unit]))
            }
        }
        return parts
    }

    // MARK: What answers mean

    /// `request` got a reply (or a server error that is its outcome) from `node`.
    package mutating func answered(by node: Endpoint, request: inout ClusterRequest) {
        unreachable.remove(node)
        request.landedOn = node
    }

    /// `request`'s try on `node` failed with `error`: what to do next.
    package mutating func failed(_ error: RedisError, on node: Endpoint, request: inout ClusterRequest) -> Decision {
        if let redirect = ClusterRedirect(error, from: node) {
            request.landedOn = node
            request.redirections += 1
            guard request.redirections <= maxRedirections else { return Decision(next: .fail) }
            request.next = follow(redirect)
            return Decision(refresh: redirect.kind == .moved ? .inBackground(force: false) : .none, next: .send)
        }
        if request.retries == .byCaller { return readerFailed(error, on: node, request: &request) }
        switch error {
        case .server(let code, _):
            request.landedOn = node
            if code == "TRYAGAIN" || code == "CLUSTERDOWN" {
                countRefusal(code)
                // The redirections count again after the pause (or the error is thrown at the deadline).
                request.redirections = 0
                return Decision(refresh: code == "CLUSTERDOWN" ? .beforeNext : .none, next: .backOff)
            }
            if !request.reloaded, request.isFunctionCall, RedisFunctionLibrary.isMissingFunction(error) {
                return Decision(next: .reloadLibraries)
            }
            return Decision(next: .fail)
        case .connectionFailed:
            // Never sent: safe to send again once the map names a reachable primary.
            counters.unreachable += 1
            unreachable.insert(node)
            return Decision(refresh: .beforeNext, next: .backOff)
        case .unknownOutcome:
            // May have run: never sent again here. The node may be gone; the next command finds out.
            request.landedOn = node
            return Decision(refresh: .inBackground(force: true), next: .fail)
        default:
            return Decision(next: .fail)
        }
    }

    /// ``failed(_:on:request:)`` for a ``ClusterReader`` (``ClusterRequest/Retries/byCaller``), after redirections
    /// (which go as for any command): an `UNBLOCKED` read is sent again once, to the slot's owner by a map read first (it returned no
    /// entry, so nothing is lost); `TRYAGAIN`, `CLUSTERDOWN`, an unreachable node and an unknown outcome are thrown to
    /// the caller's read loop, with a refresh started (at once unless `TRYAGAIN`) and the connection dropped where
    /// the node may be gone.
    private mutating func readerFailed(_ error: RedisError, on node: Endpoint, request: inout ClusterRequest) -> Decision {
        switch error {
        case .server(let code, _):
            request.landedOn = node
            if code == "UNBLOCKED", !request.unblocked {
                request.unblocked = true
                request.next = .route
                return Decision(refresh: .beforeNext, next: .send, dropConnection: true)
            }
            if code == "TRYAGAIN" || code == "CLUSTERDOWN" {
                countRefusal(code)
                let down = code == "CLUSTERDOWN"
                return Decision(refresh: .inBackground(force: down), next: .fail, dropConnection: down)
            }
            return Decision(next: .fail)
        case .connectionFailed, .unknownOutcome:
            return Decision(refresh: .inBackground(force: true), next: .fail, dropConnection: true)
        default:
            return Decision(next: .fail)
        }
    }

    /// Records a redirection and says where to send next: `MOVED` patches the map (the caller schedules a
    /// refresh); `ASK` leaves it and sends `ASKING` first.
    package mutating func follow(_ redirect: ClusterRedirect) -> ClusterRequest.Start {
        switch redirect.kind {
        case .moved:
            counters.moved += 1
            map.move(slot: redirect.slot, to: redirect.endpoint)
            return .node(redirect.endpoint)
        case .ask:
            counters.ask += 1
            return .asking(redirect.endpoint)
        }
    }

    /// Counts a `TRYAGAIN` or `CLUSTERDOWN`.
    package mutating func countRefusal(_ code: String) {
        if code == "TRYAGAIN" { counters.tryAgain += 1 } else { counters.clusterDown += 1 }
    }

    /// What to do with a pipelined command whose reply was the error `text` from `node` (the pipeline's other
    /// commands ran or not on their own; this one is sent again alone or kept).
    package enum PipelinedError: Sendable, Hashable {
        /// Send it again alone, starting there (a redirection: the node checked the slot first, it did not run).
        case resend(ClusterRequest.Start)
        /// `TRYAGAIN`/`CLUSTERDOWN`: send it again alone to its route after this pause.
        case resendAfter(Duration)
        /// `Function not found`: load the libraries on `node` and send it there again, when there are any.
        case reloadLibraries
        /// Keep the error reply.
        case keep
    }

    package mutating func pipelinedError(_ text: String, of command: RedisCommand, from node: Endpoint) -> PipelinedError {
        let error = RedisError.fromErrorReply(text)
        guard case .server(let code, _) = error else { return .keep }
        if let redirect = ClusterRedirect(error, from: node) { return .resend(follow(redirect)) }
        if command.name == "FCALL" || command.name == "FCALL_RO", RedisFunctionLibrary.isMissingFunction(text) {
            return .reloadLibraries
        }
        if code == "TRYAGAIN" || code == "CLUSTERDOWN" {
            countRefusal(code)
            return .resendAfter(.milliseconds(10))
        }
        return .keep
    }

    /// A pipeline's node could not be reached: nothing was sent there.
    package mutating func partUnreachable(_ node: Endpoint) {
        counters.unreachable += 1
        unreachable.insert(node)
    }

    // MARK: The map

    /// The nodes to ask for a new map, in order: reachable known nodes (primaries, then replicas), then the seeds,
    /// then the nodes that recently failed.
    package func refreshCandidates(seeds: [Endpoint]) -> [Endpoint] {
        var candidates: [Endpoint] = []
        for node in map.allNodes + seeds where !candidates.contains(node) && !unreachable.contains(node) {
            candidates.append(node)
        }
        for node in map.allNodes + seeds where !candidates.contains(node) {
            candidates.append(node)
        }
        return candidates
    }

    /// A new map, read from `node`.
    package mutating func install(_ newMap: ClusterSlotMap, from node: Endpoint) {
        map = newMap
        unreachable.remove(node)
        counters.refreshes += 1
    }

    /// `node` could not be reached (asked for the map).
    package mutating func markUnreachable(_ node: Endpoint) {
        unreachable.insert(node)
    }

    /// `node` answered.
    package mutating func markReachable(_ node: Endpoint) {
        unreachable.remove(node)
    }

    /// Nodes given the remembered libraries again.
    package mutating func countFunctionReload() {
        counters.functionReloads += 1
    }
}
