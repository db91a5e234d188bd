import Redis
import TestSupport
import Testing

/// ``ClusterReader`` against a real 6-node cluster: one connection to the primary of its key's slot, which follows
/// the slot when it moves, a blocked read included. Serialized like the other cluster suites.
@Suite("Cluster reader", .serialized)
struct ClusterReaderTests {
    @Test func followsItsSlotAcrossAMigrationWhileBlocked() async throws {
        try await withRedisCluster { cluster in
            let client = try await cluster.connectedClient()
            defer { client.close() }
            let stream = "{rd}s"
            let slot = ClusterKeySlot.slot(stream)
            let map = client.slotMap
            let source = try #require(map.primaries[slot])
            let target = try #require(map.allPrimaries.first { $0 != source })
            let sourceID = try #require(try await cluster.send(to: source.port, "CLUSTER", "MYID").string)
            let targetID = try #require(try await cluster.send(to: target.port, "CLUSTER", "MYID").string)
            _ = try await client.xgroupCreate(stream, group: "g", startID: "0", makeStream: true)
            _ = try await client.xadd(stream, fields: [("n", Array("1".utf8))])

            let reader = client.dedicatedConnection(forKey: stream, clientName: "test-reader")
            defer { reader.close() }
            let first = try await reader.xreadgroup(group: "g", consumer: "c", stream: stream, count: 10, block: .milliseconds(100))
            #expect(first.map { $0["n"] } == ["1"])
            #expect((reader as? ClusterReader)?.node == source)
            // One connection of its own on the slot's primary, named as asked.
            #expect(try await cluster.send(to: source.port, "CLIENT", "LIST").string?.contains("name=test-reader") == true)

            // Blocked on the source while the stream migrates to the target.
            let blocked = Task {
                try await reader.xreadgroup(group: "g", consumer: "c", stream: stream, count: 10, block: .seconds(20))
            }
            try await waitForBlockedClient(cluster, port: source.port)
            _ = try await cluster.send(to: target.port, "CLUSTER", "SETSLOT", slot, "IMPORTING", sourceID)
            _ = try await cluster.send(to: source.port, "CLUSTER", "SETSLOT", slot, "MIGRATING", targetID)
            _ = try await cluster.send(to: source.port, "MIGRATE", target.host, target.port, "", 0, 5000, "KEYS", stream)
            for primary in map.allPrimaries {
                _ = try await cluster.send(to: primary.port, "CLUSTER", "SETSLOT", slot, "NODE", targetID)
            }
            // The entry added on the target reaches the read that blocked on the source.
            _ = try await client.xadd(stream, fields: [("n", Array("2".utf8))])
            let second = try await blocked.value
            #expect(second.map { $0["n"] } == ["2"])

            // Later reads go straight to the target, on one connection there.
            _ = try await client.xadd(stream, fields: [("n", Array("3".utf8))])
            let third = try await reader.xreadgroup(group: "g", consumer: "c", stream: stream, count: 10, block: .milliseconds(500))
            #expect(third.map { $0["n"] } == ["3"])
            #expect((reader as? ClusterReader)?.node == target)
            #expect(try await cluster.send(to: target.port, "CLIENT", "LIST").string?.contains("name=test-reader") == true)
            // The group's pending list moved with the stream: all three delivered to "c", none acknowledged.
            #expect(try await client.xpendingSummary(stream, group: "g").count == 3)
        }
    }

    /// Waits until `port` has a client blocked in a command.
    private func waitForBlockedClient(_ cluster: RedisCluster, port: Int) async throws {
        let seen = await eventually {
            let info = (try? await cluster.send(to: port, "INFO", "clients").string) ?? ""
            return info.contains("blocked_clients:") && !info.contains("blocked_clients:0")
        }
        try #require(seen)
    }
}

extension StreamEntry {
    /// A field as a string, or "".
    fileprivate subscript(_ field: String) -> String { string(field) ?? "" }
}
