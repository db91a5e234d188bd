import Foundation
import Testing

extension SystemHarness {
    /// What `tollctl streams --json` reports (the fields these checks read).
    struct StreamsReport: Decodable {
        struct Group: Decodable {
            var name: String
            var pending: Int
            var lag: Int
        }

        struct Stream: Decodable {
            var name: String
            var retrying: Int
            var deadLetters: Int
            var groups: [Group]
        }

        var streams: [Stream]

        /// The jobs and verified streams (the pipeline; events has no group of Tollgate's).
        var pipeline: [Stream] { streams.filter { $0.name == "jobs" || $0.name == "verified" } }

        /// Both pipeline streams of every partition have their group (`verifiers`, `fulfillers`), none with
        /// pending entries, lag or retries.
        var isQuiet: Bool {
            let groups = pipeline.flatMap(\.groups)
            guard !pipeline.isEmpty,
                pipeline.allSatisfy({ stream in
                    stream.groups.contains { $0.name == (stream.name == "jobs" ? "verifiers" : "fulfillers") }
                })
            else { return false }
            return pipeline.allSatisfy { $0.retrying == 0 } && groups.allSatisfy { $0.pending == 0 && $0.lag == 0 }
        }
    }

    /// `tollctl streams --json`, decoded.
    func streamsReport() async throws -> (report: StreamsReport?, output: String) {
        let run = try await tollctl(["streams", "--json"])
        guard run.status == 0 else { return (nil, run.output) }
        return (try? JSONDecoder().decode(StreamsReport.self, from: Data(run.output.utf8)), run.output)
    }

    /// The checks that hold once every test is done and the system is quiet: nothing pending in the
    /// verifiers' and fulfillers' groups and nothing waiting to be retried (within 30 s), no dead letters
    /// (no test injects faults that never clear), and `tollctl audit` clean on its first run.
    func expectQuietAndConsistent(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        var streams = try await streamsReport()
        while streams.report?.isQuiet != true, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            streams = try await streamsReport()
        }
        let report = try #require(streams.report, "tollctl streams --json failed:\n\(streams.output)", sourceLocation: sourceLocation)
        #expect(report.isQuiet, "not quiet after 30 s:\n\(streams.output)\n\(logTail())", sourceLocation: sourceLocation)
        #expect(report.pipeline.allSatisfy { $0.deadLetters == 0 }, "dead letters:\n\(streams.output)", sourceLocation: sourceLocation)
        try await expectAuditClean(attempts: 1, sourceLocation: sourceLocation)
    }
}
