import Foundation
import Testing

extension SystemHarness {
    /// The checks that hold once every test is done and the system is quiet: nothing pending in the
    /// verifiers' and fulfillers' groups and nothing waiting to be retried (within 30 s), no dead letters
    /// (no test injects faults that never clear), and `tollctl audit` clean on its first run.
    func expectQuietAndConsistent(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        var streams = try await tollctl(["streams"])
        while !Self.isQuiet(streams.output), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            streams = try await tollctl(["streams"])
        }
        #expect(streams.status == 0 && Self.isQuiet(streams.output),
                "not quiet after 30 s:\n\(streams.output)\n\(logTail())", sourceLocation: sourceLocation)
        let dead = Self.pipelineBlocks(streams.output).filter { !($0.first ?? "").contains("dead-letters=0 ") }
        #expect(dead.isEmpty, "dead letters:\n\(streams.output)", sourceLocation: sourceLocation)
        try await expectAuditClean(attempts: 1, sourceLocation: sourceLocation)
    }

    /// `tollctl streams` shows the jobs and verified streams with their groups (`verifiers`, `fulfillers`),
    /// none with pending entries, lag or retries.
    static func isQuiet(_ output: String) -> Bool {
        let blocks = pipelineBlocks(output)
        let lines = blocks.flatMap { $0 }
        guard blocks.count == 2, lines.contains(where: { $0.contains("group verifiers") }),
              lines.contains(where: { $0.contains("group fulfillers") }) else { return false }
        return !lines.contains { line in
            (line.contains("retrying=") && !line.contains("retrying=0 "))
                || (line.contains("pending=") && !line.contains("pending=0 "))
                || (line.contains("lag=") && !line.hasSuffix("lag=0"))
        }
    }

    /// The blocks of `tollctl streams` (a stream's line, then its groups' lines) of the jobs and verified
    /// streams.
    static func pipelineBlocks(_ output: String) -> [[Substring]] {
        var blocks: [[Substring]] = []
        for line in output.split(separator: "\n") {
            if !line.hasPrefix(" ") {
                blocks.append([line])
            } else if !blocks.isEmpty {
                blocks[blocks.count - 1].append(line)
            }
        }
        return blocks.filter { block in
            guard let header = block.first else { return false }
            return header.hasPrefix("tg:{p0}:jobs ") || header.hasPrefix("tg:{p0}:verified ")
        }
    }
}
