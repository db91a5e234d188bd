import Redis
import TestSupport
import Testing

/// The cluster client against a real 6-node cluster. Serialized: each test starts its own cluster, and six
/// clusters at once on a small machine would make failure detection flaky.
@Suite("Redis Cluster client", .serialized)
struct RedisClusterTests {
    /// A key whose slot `primary` serves, distinct per `index`.
    static func key(on primary: RedisConfiguration.Endpoint, in map: ClusterSlotMap, _ index: Int) -> String {
        var candidate = 0
        var found = -1
        while true {
            let key = "k:\(candidate)"
            if map.primaries[ClusterKeySlot.slot(key)] == primary {
                found += 1
                if found == index { return key }
            }
            candidate += 1
        }
    }

    @Test func slotsAgreeWithClusterKeyslot() async throws {
        try await withRedisCluster { cluster in
            var keys = (0..<400).map { "tg:{u:\($0)}:account" } + (0..<400).map { "key-\($0 * 7919)" }
            keys += ["{p0}", "{p3}", "a{}b", "{}", "foo{{bar}}zap", "{a}{b}", "x{tag}y{z}", "é{ü}", "123456789", ""]
            let redis = cluster.connection(to: cluster.nodes[0].port)
            defer { redis.close() }
            let replies = try await redis.pipeline(keys.map { RedisCommand("CLUSTER", "KEYSLOT", $0) })
            for (key, reply) in zip(keys, replies) {
                #expect(reply.int.map(Int.init) == ClusterKeySlot.slot(key), "slot of \(key)")
            }
        }
    }

    @Test func commandsLandOnThePrimaryOfTheirSlot() async throws {
        try await withRedisCluster { cluster in
            let client = try await cluster.connectedClient()
            defer { client.close() }
            let map = client.slotMap
            #expect(map.allPrimaries.count == 3)
            // The client reads CLUSTER SHARDS; the same cluster's CLUSTER SLOTS names the same primaries and replicas.
            let shards = try await cluster.send(to: cluster.nodes[0].port, "CLUSTER", "SHARDS")
            let slots = try await cluster.slotMap()
            #expect(try ClusterSlotMap(clusterShards: shards, fallbackHost: "127.0.0.1") == slots)
            #expect(map == slots)
            #expect(slots.allNodes.count == 6)
            for primary in map.allPrimaries {
                let keys = (0..<5).map { Self.key(on: primary, in: map, $0) }
                for key in keys { _ = try await client.send("SET", key, "v-\(key)") }
                _ = try await client.send("HSET", "h:" + keys[0], "f", "1")
                // The node itself holds them: its own DBSIZE and GET, with no routing in between.
                #expect(try await cluster.send(to: primary.port, "GET", keys[0]).string == "v-\(keys[0])")
                #expect(try await cluster.send(to: primary.port, "EXISTS", keys[4]).int == 1)
            }
            var sizes: [Int64] = []
            for primary in map.allPrimaries {
                sizes.append(try await cluster.send(to: primary.port, "DBSIZE").int ?? -1)
            }
            #expect(sizes.reduce(0, +) == 15 + 3)  // five strings per primary, three hashes wherever their keys hash
            #expect(sizes.allSatisfy { $0 >= 5 })
            // A pipeline over all three primaries comes back in order.
            let all = map.allPrimaries.flatMap { primary in (0..<5).map { Self.key(on: primary, in: map, $0) } }
            let replies = try await client.pipeline(all.map { RedisCommand("GET", $0) } + [RedisCommand("PING")])
            #expect(replies.dropLast().map(\.string) == all.map { "v-\($0)" })
            #expect(replies.last == .status("PONG"))
            // Streams: XADD, XGROUP, XREADGROUP and XACK route by their keys.
            let stream = "tg:{p3}:jobs"
            #expect(try await client.xgroupCreate(stream, group: "g"))
            // A blocking read holds a connection of its own: commands to the same node are not held up behind it.
            let reader = Task {
                try await client.xreadgroup(group: "g", consumer: "c", stream: stream, count: 10, block: .seconds(5))
            }
            try await Task.sleep(for: .milliseconds(200))
            let beforeAdd = ContinuousClock.now
            #expect(try await client.send("XLEN", stream).int == 0)
            #expect(ContinuousClock.now - beforeAdd < .seconds(2))
            let id = try #require(try await client.xadd(stream, fields: [("a", [1])]))
            let read = try await reader.value
            #expect(read.map(\.id) == [id])
            #expect(try await client.send("XACK", stream, "g", id).int == 1)
            let owner = try #require(map.primaries[ClusterKeySlot.slot(stream)])
            #expect(try await cluster.send(to: owner.port, "XLEN", stream).int == 1)
            #expect(client.counters.moved == 0)
            #expect(client.counters.ask == 0)
            // A durable pipeline: its trailing WAIT goes to each primary written to (a WAIT covers its own connection's
            // writes only) and answers the fewest replicas any acknowledged: each primary has one.
            let durable = try await client.pipeline(
                all.map { RedisCommand("SET", $0, "w") } + [RedisCommand("WAIT", arguments: [1, 2000], keysAt: []).blocking()])
            #expect(durable.count == all.count + 1)
            #expect(durable.last == .integer(1))
            #expect(
                try await client.pipeline([
                    RedisCommand("SET", all[0], "x"), RedisCommand("WAIT", arguments: [2, 50], keysAt: []).blocking(),
                ]).last == .integer(1))
            for primary in map.allPrimaries {
                let stats = try await cluster.send(to: primary.port, "INFO", "commandstats").string ?? ""
                #expect(stats.contains("cmdstat_wait:calls="), "WAIT on \(primary)")
            }
        }
    }

    @Test func crossSlotCommandsAreRefusedBeforeSending() async throws {
        try await withRedisCluster { cluster in
            let client = try await cluster.connectedClient()
            defer { client.close() }
            let refused: [RedisCommand] = [
                RedisCommand("MSET", "{a}x", "1", "{b}y", "2"),
                RedisCommand("DEL", "{a}x", "{b}y"),
                RedisCommand("FCALL", "f", 2, "tg:{p3}:jobs", "tg:{p7}:jobs"),
                RedisCommand("XREADGROUP", "GROUP", "g", "c", "STREAMS", "tg:{p3}:jobs", "tg:{p7}:jobs", ">", ">"),
            ]
            for command in refused {
                do {
                    _ = try await client.send(command)
                    Issue.record("\(command) was sent")
                } catch let error as RedisError {
                    #expect(error.code == "cross_slot")
                }
            }
            do {
                _ = try await client.pipeline([
                    RedisCommand("SET", "{a}z", "1"), RedisCommand("MULTI"), RedisCommand("SET", "{a}x", "1"),
                    RedisCommand("SET", "{b}y", "2"), RedisCommand("EXEC"),
                ])
                Issue.record("a cross-slot MULTI block was sent")
            } catch let error as RedisError {
                #expect(error.code == "cross_slot")
            }
            for primary in client.slotMap.allPrimaries {
                #expect(try await cluster.send(to: primary.port, "DBSIZE").int == 0, "nothing written on \(primary)")
            }
            // Same slot through a hash tag: accepted, and atomic in a MULTI block.
            #expect(try await client.send("MSET", "{a}x", "1", "{a}y", "2") == .status("OK"))
            let replies = try await client.pipeline([
                RedisCommand("MULTI"), RedisCommand("INCR", "{a}x"), RedisCommand("INCR", "{a}y"), RedisCommand("EXEC"),
            ])
            #expect(replies.last == .array([.integer(2), .integer(3)]))
        }
    }

    @Test func followsALiveSlotMigration() async throws {
        try await withRedisCluster { cluster in
            let client = try await cluster.connectedClient()
            defer { client.close() }
            let slot = ClusterKeySlot.slot("mig")
            let map = client.slotMap
            let source = try #require(map.primaries[slot])
            let target = try #require(map.allPrimaries.first { $0 != source })
            let sourceID = try #require(try await cluster.send(to: source.port, "CLUSTER", "MYID").string)
            let targetID = try #require(try await cluster.send(to: target.port, "CLUSTER", "MYID").string)
            // Before: written on the source.
            for key in ["{mig}a", "{mig}b"] { _ = try await client.send("SET", key, "before-\(key)") }
            #expect(try await cluster.send(to: source.port, "CLUSTER", "COUNTKEYSINSLOT", slot).int == 2)

            // During: the slot is migrating, {mig}a already moved, {mig}b not yet.
            _ = try await cluster.send(to: target.port, "CLUSTER", "SETSLOT", slot, "IMPORTING", sourceID)
            _ = try await cluster.send(to: source.port, "CLUSTER", "SETSLOT", slot, "MIGRATING", targetID)
            _ = try await cluster.send(
                to: source.port, "MIGRATE", target.host, target.port, "", 0, 5000, "KEYS", "{mig}a")
            #expect(try await client.send("GET", "{mig}a").string == "before-{mig}a")  // ASK → target
            #expect(try await client.send("GET", "{mig}b").string == "before-{mig}b")  // still on the source
            #expect(try await client.send("SET", "{mig}c", "during") == .status("OK"))  // new keys: ASK → target
            #expect(client.counters.ask >= 2)
            // In a pipeline, the ASK reply is replaced by the command sent again with ASKING, in place.
            let asked = client.counters.ask
            let replies = try await client.pipeline([
                RedisCommand("GET", "{mig}b"), RedisCommand("GET", "{mig}a"), RedisCommand("GET", "{mig}c"),
            ])
            #expect(replies.map(\.string) == ["before-{mig}b", "before-{mig}a", "during"])
            #expect(client.counters.ask == asked + 2)
            #expect(client.counters.moved == 0)
            #expect(client.slotMap.primaries[slot] == source)  // ASK changes no map
            #expect(try await cluster.send(to: target.port, "CLUSTER", "COUNTKEYSINSLOT", slot).int == 2)
            // A durable pipeline whose write is redirected (ASK → target) waits on the target too: a WAIT covers only
            // its own node's writes, so one on the source alone would say nothing of the write that landed elsewhere.
            let waitsBefore = try await Self.waitCalls(on: target, in: cluster)
            let durable = try await client.pipeline([
                RedisCommand("GET", "{mig}b"), RedisCommand("SET", "{mig}e", "durable"),
                RedisCommand("WAIT", arguments: [1, 2000], keysAt: []).blocking(),
            ])
            #expect(durable.first?.string == "before-{mig}b")
            #expect(durable[1] == .status("OK"))
            #expect(durable.last == .integer(1))
            #expect(try await Self.waitCalls(on: target, in: cluster) == waitsBefore + 1)
            #expect(try await cluster.send(to: target.port, "CLUSTER", "COUNTKEYSINSLOT", slot).int == 3)
            // A multi-key command over moved and unmoved keys gets TRYAGAIN until the window closes.
            let impatient = try RedisClusterClient(
                configuration: cluster.configuration(), retryWindow: .milliseconds(300), logger: testLogger)
            defer { impatient.close() }
            do {
                _ = try await impatient.send("MGET", "{mig}a", "{mig}b")
                Issue.record("MGET over a half-migrated slot succeeded")
            } catch RedisError.server(let code, _) {
                #expect(code == "TRYAGAIN")
            }
            #expect(impatient.counters.tryAgain >= 2)

            // After: everything moved and the slot assigned to the target on every primary.
            _ = try await cluster.send(
                to: source.port, "MIGRATE", target.host, target.port, "", 0, 5000, "KEYS", "{mig}b")
            for primary in map.allPrimaries {
                _ = try await cluster.send(to: primary.port, "CLUSTER", "SETSLOT", slot, "NODE", targetID)
            }
            // A MULTI block sent on the stale map: the source refuses it whole (MOVED, then EXECABORT), so it is
            // sent again whole to the target and runs there once.
            let block = try await client.pipeline([
                RedisCommand("MULTI"), RedisCommand("SET", "{mig}d", "tx"), RedisCommand("INCR", "{mig}n"),
                RedisCommand("EXEC"),
            ])
            #expect(block.last?.array == [.status("OK"), .integer(1)])
            #expect(client.counters.moved == 1)
            #expect(client.slotMap.primaries[slot] == target)
            #expect(try await cluster.send(to: target.port, "GET", "{mig}n").string == "1")
            #expect(try await client.send("GET", "{mig}b").string == "before-{mig}b")
            #expect(client.slotMap.primaries[slot] == target)
            #expect(try await client.send("GET", "{mig}c").string == "during")
            #expect(try await cluster.send(to: target.port, "CLUSTER", "COUNTKEYSINSLOT", slot).int == 6)
            #expect(try await cluster.send(to: source.port, "CLUSTER", "COUNTKEYSINSLOT", slot).int == 0)
        }
    }

    /// How many `WAIT`s `node` has run (`INFO commandstats`).
    static func waitCalls(on node: RedisConfiguration.Endpoint, in cluster: RedisCluster) async throws -> Int {
        let stats = try await cluster.send(to: node.port, "INFO", "commandstats").string ?? ""
        guard let line = stats.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("cmdstat_wait:") }),
            let calls = line.split(separator: ",").first?.split(separator: "=").last
        else { return 0 }
        return Int(calls) ?? 0
    }

    @Test func followsAFailoverToThePromotedReplica() async throws {
        try await withRedisCluster(nodeTimeout: 1000) { cluster in
            let client = try await cluster.connectedClient()
            defer { client.close() }
            let map = client.slotMap
            let slot = ClusterKeySlot.slot("fo")
            let primary = try #require(map.primaries[slot])
            let replica = try #require(map.replicas[primary]?.first)
            for index in 0..<20 { _ = try await client.send("SET", "{fo}\(index)", "\(index)") }
            // Wait until the replica has them (replication is asynchronous), so the test checks the client, not luck.
            let probe = cluster.connection(to: replica.port)
            defer { probe.close() }
            let replicated = try await eventually(timeout: .seconds(10)) {
                let replies = try await probe.pipeline([RedisCommand("READONLY"), RedisCommand("GET", "{fo}19")])
                return replies.last?.string == "19"
            }
            try #require(replicated)
            await cluster.kill(port: primary.port)
            // The idle connection to the dead primary is found dead only when a command is written on it: that
            // command's outcome is unknown and it is not sent again, exactly as with one server.
            do {
                _ = try await client.send("GET", "{fo}7")
            } catch RedisError.unknownOutcome {
            }
            // A MULTI block for the dead primary is never sent there (the connection is refused): it waits out the
            // failover too and runs once, whole, on the promoted replica.
            let block = try await client.pipeline([
                RedisCommand("MULTI"), RedisCommand("INCR", "{fo}n"), RedisCommand("SET", "{fo}tx", "y"), RedisCommand("EXEC"),
            ])
            #expect(block.last?.array == [.integer(1), .status("OK")])
            #expect(try await cluster.send(to: replica.port, "GET", "{fo}n").string == "1")
            // The client waits out failure detection and the election, following the map to the replica.
            let started = ContinuousClock.now
            #expect(try await client.send("SET", "{fo}after", "x") == .status("OK"))
            let elapsed = ContinuousClock.now - started
            #expect(try await client.send("GET", "{fo}7").string == "7")
            #expect(client.slotMap.primaries[slot] == replica)
            #expect(client.counters.unreachable > 0)
            #expect(client.counters.refreshes >= 2)
            #expect(try await cluster.send(to: replica.port, "GET", "{fo}after").string == "x")
            // The other primaries never stopped.
            for other in map.allPrimaries where other != primary {
                let key = Self.key(on: other, in: map, 0)
                #expect(try await client.send("SET", key, "y") == .status("OK"))
            }
            print("cluster failover: a write waited \(elapsed) for the promoted replica")
        }
    }

    @Test func functionsAreLoadedOnEveryPrimaryAndReloadedWhereLost() async throws {
        try await withRedisCluster { cluster in
            let client = try RedisClusterClient(configuration: cluster.configuration(), logger: testLogger)
            defer { client.close() }
            let library = RedisFunctionLibrary(
                "clustertest", version: 1, functions: ["set"],
                parts: [
                    Array(
                        """
                        redis.register_function(PREFIX .. 'set', function(keys, args)
                          redis.call('SET', keys[1], args[1])
                          return redis.call('GET', keys[1])
                        end)
                        """.utf8)
                ])
            try await library.load(on: client)
            let map = client.slotMap
            for primary in map.allPrimaries {
                let list = try await cluster.send(to: primary.port, "FUNCTION", "LIST", "LIBRARYNAME", library.name)
                #expect(list.array?.count == 1, "library on \(primary)")
                let key = Self.key(on: primary, in: map, 0)
                #expect(try await library.call("set", on: client, keys: [key], arguments: ["1"]).string == "1")
            }
            #expect(client.counters.functionReloads == 0)
            let lost = map.allPrimaries[1]
            _ = try await cluster.send(to: lost.port, "FUNCTION", "FLUSH")
            let key = Self.key(on: lost, in: map, 1)
            #expect(try await client.fcall(library.function("set"), keys: [key], arguments: ["2"]).string == "2")
            #expect(client.counters.functionReloads == 1)
            let list = try await cluster.send(to: lost.port, "FUNCTION", "LIST", "LIBRARYNAME", library.name)
            #expect(list.array?.count == 1)
            // In a pipeline too.
            _ = try await cluster.send(to: lost.port, "FUNCTION", "FLUSH")
            let replies = try await client.pipeline([library.command("set", keys: [Array(key.utf8)], arguments: [Array("3".utf8)])])
            #expect(replies == [.bulk(Array("3".utf8))])
            #expect(client.counters.functionReloads == 2)
        }
    }
}
