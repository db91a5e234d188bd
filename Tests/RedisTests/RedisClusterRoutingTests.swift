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
