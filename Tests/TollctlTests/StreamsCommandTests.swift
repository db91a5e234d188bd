import Foundation
import Pipeline
import Redis
import TestSupport
import Testing

/// `tollctl streams` and `tollctl job`, the real binary against a real Redis set up by hand.
@Suite struct StreamsCommandTests {
    struct Report: Decodable {
        struct Group: Decodable {
            var name: String
            var consumers: Int
            var pending: Int
            var lag: Int
        }

        struct Stream: Decodable {
            var name: String
            var partition: Int
            var stream: String
            var length: Int
            var retrying: Int
            var deadLetters: Int
            var groups: [Group]
        }

        var streams: [Stream]
    }

    @Test func jsonReportsLengthsGroupsRetriesAndDeadLetters() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            let jobs = Keys().jobs()
            _ = try await redis.xgroupCreate(jobs.stream, group: "verifiers", startID: "0", makeStream: true)
            for index in 0..<3 { _ = try await redis.xadd(jobs.stream, fields: [("job", Array("j\(index)".utf8))]) }
            // One delivered and left pending, two not delivered yet; one waiting retry, two dead letters.
            _ = try await redis.xreadgroup(group: "verifiers", consumer: "c1", stream: jobs.stream, id: ">", count: 1, block: nil)
            _ = try await redis.send("ZADD", jobs.retry, 1, "r1")
            for index in 0..<2 { _ = try await redis.xadd(jobs.deadLetter, fields: [("job", Array("d\(index)".utf8))]) }

            let environment = ["TOLLGATE_REDIS_URL": server.url]
            let json = try await ChildProcess.run("tollctl", arguments: ["streams", "--json"], environment: environment)
            #expect(json.status == 0, "\(json.output)")
            let report = try JSONDecoder().decode(Report.self, from: Data(json.output.utf8))
            #expect(report.streams.map(\.name) == ["jobs", "verified", "events"])
            let jobsReport = try #require(report.streams.first)
            #expect(jobsReport.stream == jobs.stream && jobsReport.partition == 0)
            #expect(jobsReport.length == 3 && jobsReport.retrying == 1 && jobsReport.deadLetters == 2)
            let group = try #require(jobsReport.groups.first)
            #expect(group.name == "verifiers" && group.consumers == 1 && group.pending == 1 && group.lag == 2)
            #expect(report.streams[1].groups.isEmpty && report.streams[1].length == 0)

            let text = try await ChildProcess.run("tollctl", arguments: ["streams"], environment: environment)
            #expect(text.output.contains("\(jobs.stream)  length=3  retrying=1  dead-letters=2"))
            #expect(text.output.contains("  group verifiers  consumers=1  pending=1  lag=2"))

            let missing = try await ChildProcess.run("tollctl", arguments: ["job", "no-such-job"], environment: environment)
            #expect(missing.status == 1)
            #expect(missing.output.contains("tollctl: error: job_not_found: no status for job no-such-job"))
        }
    }
}
