/// Which primary serves each of the 16384 slots, and the replicas of each primary, from `CLUSTER SLOTS`.
package struct ClusterSlotMap: Sendable, Hashable {
    package typealias Endpoint = RedisConfiguration.Endpoint

    /// Per slot, its primary; nil for a slot no node serves.
    package private(set) var primaries: [Endpoint?]
    /// Per primary, its replicas (as `CLUSTER SLOTS` listed them).
    package private(set) var replicas: [Endpoint: [Endpoint]]

    package init() {
        primaries = Array(repeating: nil, count: ClusterKeySlot.count)
        replicas = [:]
    }

    /// Parses a `CLUSTER SLOTS` reply: `[[start, end, [host, port, id, …], [replica…]…]…]`. A node listed with
    /// an empty host (Redis does not know its own address) gets `fallbackHost`, the host that was asked.
    package init(clusterSlots reply: RedisReply, fallbackHost: String) throws {
        self.init()
        guard let ranges = reply.array else { throw RedisError.protocolError("CLUSTER SLOTS returned \(reply)") }
        for range in ranges {
            guard let fields = range.array, fields.count >= 3, let start = fields[0].int, let end = fields[1].int,
                start >= 0, start <= end, end < ClusterKeySlot.count
            else { throw RedisError.protocolError("CLUSTER SLOTS range \(range)") }
            let nodes = try fields[2...].map { try Self.endpoint($0, fallbackHost: fallbackHost) }
            for slot in Int(start)...Int(end) { primaries[slot] = nodes[0] }
            let known = replicas[nodes[0]] ?? []
            replicas[nodes[0]] = known + nodes.dropFirst().filter { !known.contains($0) }
        }
    }

    /// Every primary that serves at least one slot, sorted by address.
    package var allPrimaries: [Endpoint] {
        Set(primaries.compactMap { $0 }).sorted { ($0.host, $0.port) < ($1.host, $1.port) }
    }

    /// Primaries then replicas: where to ask for a new map.
    package var allNodes: [Endpoint] {
        let primaries = allPrimaries
        return primaries + primaries.flatMap { replicas[$0] ?? [] }
    }

    package var isEmpty: Bool { replicas.isEmpty }

    /// After `MOVED slot endpoint`: the slot's primary is `endpoint`.
    package mutating func move(slot: Int, to endpoint: Endpoint) {
        guard primaries.indices.contains(slot) else { return }
        primaries[slot] = endpoint
    }

    private static func endpoint(_ reply: RedisReply, fallbackHost: String) throws -> Endpoint {
        guard let fields = reply.array, fields.count >= 2, let host = fields[0].string, let port = fields[1].int,
            (1...65535).contains(port)
        else { throw RedisError.protocolError("CLUSTER SLOTS node \(reply)") }
        return Endpoint(host: host.isEmpty || host == "?" ? fallbackHost : host, port: Int(port))
    }
}

/// A `MOVED` or `ASK` error reply: `MOVED 3999 127.0.0.1:6381`.
package struct ClusterRedirect: Sendable, Hashable {
    package enum Kind: Sendable, Hashable {
        case moved, ask
    }

    package var kind: Kind
    package var slot: Int
    package var endpoint: RedisConfiguration.Endpoint

    /// Parses the error (nil when it is not a redirection). An empty host means the node that answered.
    package init?(_ error: RedisError, from node: RedisConfiguration.Endpoint) {
        guard case .server(let code, let message) = error, code == "MOVED" || code == "ASK" else { return nil }
        let parts = message.split(separator: " ")
        guard parts.count == 3, let slot = Int(parts[1]), let colon = parts[2].lastIndex(of: ":"),
            let port = Int(parts[2][parts[2].index(after: colon)...])
        else { return nil }
        var host = String(parts[2][..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        kind = code == "MOVED" ? .moved : .ask
        self.slot = slot
        endpoint = RedisConfiguration.Endpoint(host: host.isEmpty ? node.host : host, port: port)
    }
}
