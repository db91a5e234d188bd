import Redis
import TestSupport
import Testing

/// The cluster client's pure parts: slots, key positions, seeds in the URL.
@Suite("Redis Cluster: slots, keys, seeds")
struct RedisClusterRoutingTests {
    @Test func crc16AndHashTags() {
        #expect(ClusterKeySlot.crc16(Array("123456789".utf8)) == 0x31C3)
        #expect(ClusterKeySlot.slot("{p0}") == 15882)
        #expect(ClusterKeySlot.slot("{p3}") == 3689)
        #expect(ClusterKeySlot.slot("{u:42}") == 8980)
        #expect(ClusterKeySlot.slot("tg:{u:42}:account") == ClusterKeySlot.slot("u:42"))
        #expect(ClusterKeySlot.slot("foo{{bar}}zap") == ClusterKeySlot.slot("{bar"))
    }

    @Test func keyPositionsOfTheCommandsTollgateSends() throws {
        func keys(_ words: String...) -> [String] {
            ClusterRoute.keys(of: RedisCommand(arguments: words.map { Array($0.utf8) })).map { String(decoding: $0, as: UTF8.self) }
        }
        #expect(keys("GET", "a") == ["a"])
        #expect(keys("hset", "h", "f", "v") == ["h"])
        #expect(keys("DEL", "a", "b") == ["a", "b"])
        #expect(keys("MSET", "a", "1", "b", "2") == ["a", "b"])
        #expect(keys("XREADGROUP", "GROUP", "g", "c", "COUNT", "5", "BLOCK", "10", "STREAMS", "s1", "s2", ">", ">") == ["s1", "s2"])
        #expect(keys("XREAD", "streams", "s", "0") == ["s"])
        #expect(keys("XGROUP", "CREATE", "s", "g", "$") == ["s"])
        #expect(keys("XINFO", "GROUPS", "s") == ["s"])
        #expect(keys("FCALL", "f", "2", "k1", "k2", "arg") == ["k1", "k2"])
        #expect(keys("FCALL_RO", "f", "0", "arg").isEmpty)
        #expect(keys("EVALSHA", "abc", "1", "k", "a") == ["k"])
        #expect(keys("BLPOP", "l1", "l2", "0") == ["l1", "l2"])
        #expect(keys("PUBLISH", "channel", "m").isEmpty)
        #expect(keys("PING").isEmpty)
        #expect(try ClusterRoute.of(RedisCommand("FUNCTION", "LOAD", "x")) == .everyPrimary)
        #expect(try ClusterRoute.of(RedisCommand("FUNCTION", "LIST")) == .anyPrimary)
        #expect(try ClusterRoute.of(RedisCommand("MGET", "{t}a", "{t}b")) == .slot(ClusterKeySlot.slot("t")))
        #expect(throws: RedisError.self) { try ClusterRoute.of(RedisCommand("FCALL", "f", 2, "{p3}a", "{p7}a")) }
        do {
            _ = try ClusterRoute.of(RedisCommand("MSET", "a", "1", "b", "2"))
            Issue.record("cross-slot MSET routed")
        } catch let error as RedisError {
            #expect(error.code == "cross_slot")
        }
    }

    /// `CLUSTER SHARDS` as Redis 7.0.15 answered it (`redis-cli --no-raw`) on six nodes after 100 slots moved from the
    /// first primary to the third, so one shard has two ranges; the replicas had just joined (`loading`).
    static func recordedShards(thirdReplicaHealth: String = "online") -> RedisReply {
        func node(_ id: String, _ port: Int64, _ role: String, _ offset: Int64, _ health: String) -> RedisReply {
            .array([
                .bulk(Array("id".utf8)), .bulk(Array(id.utf8)), .bulk(Array("port".utf8)), .integer(port),
                .bulk(Array("ip".utf8)), .bulk(Array("127.0.0.1".utf8)), .bulk(Array("endpoint".utf8)),
                .bulk(Array("127.0.0.1".utf8)), .bulk(Array("role".utf8)), .bulk(Array(role.utf8)),
                .bulk(Array("replication-offset".utf8)), .integer(offset), .bulk(Array("health".utf8)),
                .bulk(Array(health.utf8)),
            ])
        }
        func shard(_ bounds: [Int64], _ nodes: [RedisReply]) -> RedisReply {
            .array([.bulk(Array("slots".utf8)), .array(bounds.map { .integer($0) }), .bulk(Array("nodes".utf8)), .array(nodes)])
        }
        return .array([
            shard(
                [100, 5460],
                [
                    node("ed8158c54dee2f4ecd4c398d55342c41ebad4dad", 27101, "master", 14, "online"),
                    node("3917ea4f83aafde5d7952dd2f0356f582d60f934", 27105, "replica", 0, "loading"),
                ]),
            shard(
                [5461, 10922],
                [
                    node("4a2d6040e342c1478213e758ed8a515328d2b477", 27102, "master", 0, "online"),
                    node("afa0fd619bcbb01b7fdeb250821ba065f4a25739", 27106, "replica", 0, "loading"),
                ]),
            shard(
                [0, 99, 10923, 16383],
                [
                    node("76f0d715e880909d256909305b8b006a2ae8d771", 27103, "master", 0, "online"),
                    node("7a8e58e717eba71179113b5f3969891022600024", 27104, "replica", 14, thirdReplicaHealth),
                ]),
        ])
    }

    @Test func clusterShardsReplyShape() throws {
        func endpoint(_ port: Int) -> RedisConfiguration.Endpoint { .init(host: "127.0.0.1", port: port) }
        let map = try ClusterSlotMap(clusterShards: Self.recordedShards(), fallbackHost: "seed")
        #expect(map.primaries[0] == endpoint(27103) && map.primaries[99] == endpoint(27103))
        #expect(map.primaries[100] == endpoint(27101) && map.primaries[5460] == endpoint(27101))
        #expect(map.primaries[5461] == endpoint(27102) && map.primaries[10922] == endpoint(27102))
        #expect(map.primaries[10923] == endpoint(27103) && map.primaries[16383] == endpoint(27103))
        #expect(!map.primaries.contains(nil))
        #expect(
            map.replicas == [endpoint(27101): [endpoint(27105)], endpoint(27102): [endpoint(27106)], endpoint(27103): [endpoint(27104)]])

        // The same cluster's CLUSTER SLOTS, recorded at the same moment, gives the same map.
        func slotsNode(_ port: Int64) -> RedisReply { .array([.bulk(Array("127.0.0.1".utf8)), .integer(port), .bulk(Array("id".utf8))]) }
        let slots = RedisReply.array([
            .array([.integer(0), .integer(99), slotsNode(27103), slotsNode(27104)]),
            .array([.integer(100), .integer(5460), slotsNode(27101), slotsNode(27105)]),
            .array([.integer(5461), .integer(10922), slotsNode(27102), slotsNode(27106)]),
            .array([.integer(10923), .integer(16383), slotsNode(27103), slotsNode(27104)]),
        ])
        #expect(try ClusterSlotMap(clusterSlots: slots, fallbackHost: "seed") == map)

        // A failed replica is left out, as CLUSTER SLOTS does.
        let failedReplica = try ClusterSlotMap(clusterShards: Self.recordedShards(thirdReplicaHealth: "failed"), fallbackHost: "seed")
        #expect(failedReplica.replicas[endpoint(27103)] == [])
        #expect(failedReplica.primaries == map.primaries)
    }

    @Test func clusterShardsAfterAFailoverAndMalformedReplies() throws {
        func field(_ name: String, _ value: RedisReply) -> [RedisReply] { [.bulk(Array(name.utf8)), value] }
        func text(_ value: String) -> RedisReply { .bulk(Array(value.utf8)) }
        func node(_ port: Int64, _ role: String, _ health: String, endpoint: String = "10.0.0.9") -> RedisReply {
            .array(
                field("port", .integer(port)) + field("ip", text("10.0.0.9")) + field("endpoint", text(endpoint))
                    + field("role", text(role)) + field("health", text(health)))
        }
        func shard(_ bounds: [Int64], _ nodes: [RedisReply]) -> RedisReply {
            .array(field("slots", .array(bounds.map { .integer($0) })) + field("nodes", .array(nodes)))
        }
        // Redis 7.2 lists a shard by its id: the failed old primary beside the promoted replica. An emptied primary's
        // shard has no slots. An unknown endpoint falls back to the ip.
        let map = try ClusterSlotMap(
            clusterShards: .array([
                shard([0, 16383], [node(7000, "master", "failed"), node(7001, "master", "online", endpoint: "?")]),
                shard([], [node(7002, "master", "online")]),
            ]),
            fallbackHost: "seed")
        #expect(map.allPrimaries == [.init(host: "10.0.0.9", port: 7001)])
        #expect(map.allNodes == [.init(host: "10.0.0.9", port: 7001)])

        for bad: RedisReply in [
            .integer(1), .array([.integer(1)]), .array([shard([0], [node(7000, "master", "online")])]),
            .array([shard([5, 2], [node(7000, "master", "online")])]), .array([shard([0, 16384], [node(7000, "master", "online")])]),
            .array([shard([0, 1], [node(7000, "replica", "online")])]), .array([shard([0, 1], [node(0, "master", "online")])]),
        ] {
            #expect(throws: RedisError.self, "\(bad)") { try ClusterSlotMap(clusterShards: bad, fallbackHost: "seed") }
        }
    }

    @Test func seedsInTheURL() throws {
        let configuration = try RedisConfiguration(url: "redis://:pw@10.0.0.1:7000,10.0.0.2,[::1]:7002")
        #expect(configuration.host == "10.0.0.1")
        #expect(configuration.port == 7000)
        #expect(configuration.password == "pw")
        #expect(configuration.seeds.map(\.description) == ["10.0.0.1:7000", "10.0.0.2:6379", "[::1]:7002"])
        #expect(configuration.description == "redis://:***@10.0.0.1:7000,10.0.0.2:6379,[::1]:7002/0")
        let single = try RedisConfiguration(url: "redis://h:6380/2")
        #expect(single.seeds == [.init(host: "h", port: 6380)])
        #expect(single.description == "redis://h:6380/2")
        #expect(throws: RedisError.self) { try RedisConfiguration(url: "redis://a:1,,b:2") }
        #expect(throws: RedisError.self) { try RedisConfiguration(url: "redis://a:1,b:x") }
        #expect(throws: RedisError.self) { try RedisClusterClient(configuration: single, logger: testLogger) }
    }
}
