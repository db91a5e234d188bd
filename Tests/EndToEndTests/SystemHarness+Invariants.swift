import Foundation
import Testing

extension SystemHarness {
    /// The checks that hold once every test is done and the system is quiet: nothing pending in any
    /// consumer group and nothing waiting to be retried (within 30 s), no dead letters (no test injects
    /// faults that never clear), and `tollctl audit` clean on its first run.
    func expectQuietAndConsistent(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        var streams = try await tollctl(["streams"])
        while !Self.isQuiet(streams.output), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
            streams = try await tollctl(["streams"])
        }
        #expect(streams.status == 0 && Self.isQuiet(streams.output),
                "not quiet after 30 s:\n\(streams.output)\n\(logTail())", sourceLocation: sourceLocation)
        let deadLetters = streams.output.split(separator: "\n").filter { $0.contains("dead-letters=") && !$0.contains("dead-letters=0 ") }
        #expect(deadLetters.isEmpty, "dead letters:\n\(streams.output)", sourceLocation: sourceLocation)
        try await expectAuditClean(attempts: 1, sourceLocation: sourceLocation)
    }

    /// `tollctl streams` shows no pending entries, no lag and no retries.
    static func isQuiet(_ output: String) -> Bool {
        let lines = output.split(separator: "\n")
        guard lines.contains(where: { $0.contains("group verifiers") }),
              lines.contains(where: { $0.contains("group fulfillers") }) else { return false }
        return !lines.contains { line in
            (line.contains("retrying=") && !line.contains("retrying=0 "))
                || (line.contains("pending=") && !line.contains("pending=0 "))
                || (line.contains("lag=") && !line.hasSuffix("lag=0"))
        }
    }
}
