/// Which primary serves each of the 16384 slots, and the replicas of each primary, from `CLUSTER SHARDS` (Redis 7)
/// or `CLUSTER SLOTS`.
package struct ClusterSlotMap: Sendable, Hashable {
    package typealias Endpoint = RedisConfiguration.Endpoint

    /// Per slot, its primary; nil for a slot no node serves.
    package private(set) var primaries: [Endpoint?]
    /// Per primary, its replicas (as `CLUSTER SHARDS` or `CLUSTER SLOTS` listed them).
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

    /// Parses a `CLUSTER SHARDS` reply (Redis 7): per shard a map (in RESP2, which this client speaks, a flat list of
    /// name, value) with `slots`, a flat list of range bounds `[start, end, start, end, …]`, and `nodes`, each a map
    /// with `port` (or `tls-port`), `endpoint`, `ip`, `role` (`master`, or `primary` as Valkey may say, or `replica`)
    /// and `health` (`online`, `loading`, `failed`). The shard's master serves its ranges — the one not `failed` when
    /// Redis lists two (a failed old primary beside the promoted replica), else the only one: until a replica is
    /// promoted the failed primary still owns the slots, as `CLUSTER SLOTS` says too. Replicas are listed unless
    /// `failed` (`CLUSTER SLOTS` leaves those out); nodes of another role are skipped. A shard without slots (a primary
    /// emptied by a migration, a failed old primary) is skipped. A node with an empty or `?` endpoint (Redis does not
    /// know its own address) gets its `ip`, else `fallbackHost`, the host that was asked.
    package init(clusterShards reply: RedisReply, fallbackHost: String) throws {
        self.init()
        guard let shards = reply.array else { throw RedisError.protocolError("CLUSTER SHARDS returned \(reply)") }
        for shard in shards {
            let fields = try Self.fields(shard, "CLUSTER SHARDS shard")
            guard let bounds = fields["slots"]?.array, bounds.count % 2 == 0, let nodes = fields["nodes"]?.array else {
                throw RedisError.protocolError("CLUSTER SHARDS shard \(shard)")
            }
            if bounds.isEmpty { continue }
            var masters: [(endpoint: Endpoint, failed: Bool)] = []
            var shardReplicas: [Endpoint] = []
            for node in nodes {
                let node = try Self.fields(node, "CLUSTER SHARDS node")
                let endpoint = try Self.endpoint(shardNode: node, fallbackHost: fallbackHost)
                let failed = node["health"]?.string == "failed"
                switch node["role"]?.string {
                case "master", "primary":
                    masters.append((endpoint, failed))
                case "replica":
                    if !failed, !shardReplicas.contains(endpoint) { shardReplicas.append(endpoint) }
                default:
                    continue
                }
            }
            guard let primary = (masters.first { !$0.failed } ?? masters.first)?.endpoint else {
                throw RedisError.protocolError("CLUSTER SHARDS shard without a master: \(shard)")
            }
            let known = replicas[primary] ?? []
            replicas[primary] = known + shardReplicas.filter { !known.contains($0) }
            for pair in stride(from: 0, to: bounds.count, by: 2) {
                guard let start = bounds[pair].int, let end = bounds[pair + 1].int, start >= 0, start <= end,
                    end < ClusterKeySlot.count
                else { throw RedisError.protocolError("CLUSTER SHARDS slot range \(bounds)") }
                for slot in Int(start)...Int(end) { primaries[slot] = primary }
            }
        }
    }

    /// A RESP2 map (`[name, value, name, value, …]`) by name.
    private static func fields(_ reply: RedisReply, _ what: String) throws -> [String: RedisReply] {
        guard let flat = reply.array, flat.count % 2 == 0 else { throw RedisError.protocolError("\(what) \(reply)") }
        var fields: [String: RedisReply] = [:]
        for pair in stride(from: 0, to: flat.count, by: 2) {
            guard let name = flat[pair].string else { throw RedisError.protocolError("\(what) \(reply)") }
            fields[name] = flat[pair + 1]
        }
        return fields
    }

    private static func endpoint(shardNode node: [String: RedisReply], fallbackHost: String) throws -> Endpoint {
        guard let port = (node["port"] ?? node["tls-port"])?.int, (1...65535).contains(port) else {
            throw RedisError.protocolError("CLUSTER SHARDS node port in \(node)")
        }
        let host = [node["endpoint"]?.string, node["ip"]?.string].compactMap { $0 }.first { !$0.isEmpty && $0 != "?" }
        return Endpoint(host: host ?? fallbackHost, port: Int(port))
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
