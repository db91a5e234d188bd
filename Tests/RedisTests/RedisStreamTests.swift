import Redis
import TestSupport
import Testing

@Suite("Stream helpers")
struct RedisStreamTests {
    @Test func addCreateReadAckAndPending() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer { redis.close() }
            #expect(try await redis.xadd("jobs", fields: [("k", [1])], noMakeStream: true) == nil)
            #expect(try await redis.xlen("jobs") == 0)
            #expect(try await redis.xgroupCreate("jobs", group: "workers"))
            #expect(try await !redis.xgroupCreate("jobs", group: "workers"))  // BUSYGROUP tolerated
            #expect(try await redis.send("PING") == .status("PONG"))  // connection kept

            let payload: [UInt8] = [0, 0xFF, 10, 13, 0]
            let first = try #require(try await redis.xadd("jobs", fields: [("body", payload), ("kind", Array("a".utf8))]))
            let second = try #require(try await redis.xadd("jobs", fields: [("body", [2])], noMakeStream: true))
            #expect(try await redis.xlen("jobs") == 2)

            let read = try await redis.xreadgroup(group: "workers", consumer: "c1", stream: "jobs", count: 10, block: nil)
            #expect(read.map(\.id) == [first, second])
            #expect(read.first?.fields["body"] == payload)
            #expect(read.first?.string("kind") == "a")
            #expect(
                try await redis.xreadgroup(
                    group: "workers", consumer: "c1", stream: "jobs", count: 10,
                    block: .milliseconds(50)
                ).isEmpty)
            let own = try await redis.xreadgroup(
                group: "workers", consumer: "c1", stream: "jobs", id: "0",
                count: 10, block: nil)
            #expect(own.map(\.id) == [first, second])

            let summary = try await redis.xpendingSummary("jobs", group: "workers")
            #expect(summary.count == 2)
            #expect(summary.smallestID == first)
            #expect(summary.largestID == second)
            #expect(summary.consumers == ["c1": 2])

            let pending = try await redis.xpending("jobs", group: "workers", count: 10)
            #expect(pending.map(\.id) == [first, second])
            #expect(pending.allSatisfy { $0.consumer == "c1" && $0.deliveryCount == 2 })
            #expect(try await redis.xpending("jobs", group: "workers", count: 10, consumer: "other").isEmpty)
            #expect(try await redis.xpending("jobs", group: "workers", count: 10, minIdle: .seconds(60)).isEmpty)

            #expect(try await redis.xack("jobs", group: "workers", ids: [first, "9-9"]) == 1)
            #expect(try await redis.xack("jobs", group: "workers", ids: [first]) == 0)
            #expect(try await redis.xack("jobs", group: "workers", ids: []) == 0)
            let after = try await redis.xpendingSummary("jobs", group: "workers")
            #expect(after.count == 1)
            #expect(after.smallestID == second)
            #expect(try await redis.xgroupCreate("jobs", group: "idle"))
            let untouched = try await redis.xpendingSummary("jobs", group: "idle")
            #expect(untouched.count == 0)
            #expect(untouched.smallestID == nil)
            #expect(untouched.consumers.isEmpty)
        }
    }

    @Test func readGroupOnMissingGroupThrowsNoGroup() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer { redis.close() }
            _ = try await redis.xadd("jobs", fields: [("a", [1])])
            await #expect(throws: RedisError.self) {
                _ = try await redis.xreadgroup(group: "missing", consumer: "c", stream: "jobs", count: 1, block: nil)
            }
            do {
                _ = try await redis.xpendingSummary("jobs", group: "missing")
            } catch RedisError.server(let code, _) {
                #expect(code == "NOGROUP")
            }
            #expect(try await redis.xlen("jobs") == 1)
        }
    }

    @Test func autoclaimTakesOverIdleEntriesAndReportsDeletedOnes() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer { redis.close() }
            #expect(try await redis.xgroupCreate("jobs", group: "g"))
            var ids: [String] = []
            for index in 0..<3 {
                ids.append(try #require(try await redis.xadd("jobs", fields: [("n", Array("\(index)".utf8))])))
            }
            _ = try await redis.xreadgroup(group: "g", consumer: "crashed", stream: "jobs", count: 10, block: nil)
            _ = try await redis.send("XDEL", "jobs", ids[1])  // trimmed while pending
            try await Task.sleep(for: .milliseconds(30))

            // Not idle long enough: nothing claimed, but the scan already drops and reports the deleted entry.
            let none = try await redis.xautoclaim("jobs", group: "g", consumer: "rescuer", minIdle: .seconds(60), count: 10)
            #expect(none.entries.isEmpty)
            #expect(none.deletedIDs == [ids[1]])

            let claimed = try await redis.xautoclaim(
                "jobs", group: "g", consumer: "rescuer", minIdle: .milliseconds(20),
                count: 10)
            #expect(claimed.entries.map(\.id) == [ids[0], ids[2]])
            #expect(claimed.entries.map { $0.string("n") } == ["0", "2"])
            #expect(claimed.deletedIDs.isEmpty)
            #expect(claimed.nextStart == "0-0")
            let summary = try await redis.xpendingSummary("jobs", group: "g")
            #expect(summary.consumers == ["rescuer": 2])
        }
    }

    @Test func infoGroupsAndTrimAndRange() async throws {
        try await withRedisServer { (server: RedisServer) async throws in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            defer { redis.close() }
            var ids: [String] = []
            for index in 1...5 {
                ids.append(try #require(try await redis.xadd("s", id: "\(index)-0", fields: [("i", Array("\(index)".utf8))])))
            }
            #expect(ids == ["1-0", "2-0", "3-0", "4-0", "5-0"])
            #expect(try await redis.xgroupCreate("s", group: "a", startID: "0"))
            #expect(try await redis.xgroupCreate("s", group: "b", startID: "$"))
            _ = try await redis.xreadgroup(group: "a", consumer: "c", stream: "s", count: 2, block: nil)

            let groups = try await redis.xinfoGroups("s").sorted { $0.name < $1.name }
            #expect(groups.map(\.name) == ["a", "b"])
            #expect(groups[0].consumers == 1)
            #expect(groups[0].pending == 2)
            #expect(groups[0].lastDeliveredID == "2-0")
            #expect(groups[0].entriesRead == 2)
            #expect(groups[0].lag == 3)
            #expect(groups[1].consumers == 0)
            #expect(groups[1].lag == 0)

            #expect(try await redis.xrange("s", start: "2-0", end: "4-0").map(\.id) == ["2-0", "3-0", "4-0"])
            #expect(try await redis.xrange("s", count: 2).map { $0.string("i") } == ["1", "2"])

            #expect(try await redis.xtrimMinID("s", minID: "3-0") == 2)
            #expect(try await redis.xrange("s").map(\.id) == ["3-0", "4-0", "5-0"])
            #expect(try await redis.xtrimMinID("s", minID: "3-0", approximate: true) == 0)
            // After deleting from the middle Redis cannot compute the lag any more: nil, not a parse failure.
            _ = try await redis.send("XDEL", "s", "4-0")
            let afterDelete = try await redis.xinfoGroups("s").first { $0.name == "a" }
            #expect(afterDelete?.lag == nil)
            #expect(try await redis.xlen("s") == 2)
        }
    }
}
