import Core
import Foundation
import TestSupport
import Testing

/// Every executable ends on an error it cannot go on from with one line, `<tool>: error: <code>: <message>`,
/// and exit status 1.
@Suite struct FatalTests {
    struct Plain: Error, CustomStringConvertible {
        var description: String { "two\nlines" }
    }

    @Test func theLineCarriesTheCodeOrSaysUnexpected() {
        let error = ConfigurationError(variable: "LOG_LEVEL", problem: "must be one of …")
        #expect(Fatal.line(tool: "ingest", error: error) == "ingest: error: invalid_configuration: LOG_LEVEL must be one of …")
        #expect(Fatal.line(tool: "tollctl", error: Plain()) == "tollctl: error: unexpected: two lines")
    }

    /// The real binaries, started with a setting they must refuse.
    @Test(arguments: [
        ("ingest", [String]()), ("verifier", []), ("fulfiller", []), ("notifier", []), ("appstore-sim", []),
        ("tollctl", ["streams"]),
    ])
    func everyExecutableReportsABadSettingTheSameWay(tool: String, arguments: [String]) async throws {
        let run = try await ChildProcess.run(
            tool, arguments: arguments,
            environment: [
                "LOG_LEVEL": "loud", "TOLLGATE_BUNDLE_ID": "com.example.app", "TOLLGATE_REDIS_URL": "redis://127.0.0.1:1",
            ])
        #expect(run.status == 1, "\(run.output)")
        let lines = run.output.split(separator: "\n").map(String.init)
        #expect(
            lines.last?.hasPrefix("\(tool): error: invalid_configuration: LOG_LEVEL must be one of trace") == true,
            "\(run.output)")
    }

    /// What is ArgumentParser's stays ArgumentParser's: help and usage errors are not fatal-error lines.
    @Test func tollctlLeavesHelpAndUsageToArgumentParser() async throws {
        let help = try await ChildProcess.run("tollctl", arguments: ["verify", "--help"], environment: [:])
        #expect(help.status == 0, "\(help.output)")
        #expect(help.output.contains("USAGE: tollctl verify"))
        let usage = try await ChildProcess.run("tollctl", arguments: ["dead", "list", "--count", "0"], environment: [:])
        #expect(usage.status != 0 && !usage.output.contains("tollctl: error: unexpected"), "\(usage.output)")
    }
}
