package import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A built executable of this package run as a child process by a test (`appstore-sim`, `verifier`,
/// `tollctl`), found next to the test bundle or in `.build/debug`.
package final class ChildProcess: Sendable {
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        package init(description: String) { self.description = description }
    }

    /// The running child (spawned with ``SpawnedProcess``, not Foundation's `Process`: see there why).
    package let process: SpawnedProcess

    private init(process: SpawnedProcess) {
        self.process = process
    }

    package var pid: Int32 { process.processIdentifier }

    /// The directory holding the package's built executables.
    package static func binaryURL(_ name: String) throws -> URL {
        var candidates: [URL] = []
        let runner = URL(fileURLWithPath: CommandLine.arguments.first ?? "")
        candidates.append(runner.deletingLastPathComponent())
        candidates.append(Bundle.main.bundleURL)
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        candidates.append(URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/debug"))
        for directory in candidates {
            let url = directory.appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw Failure(description: "\(name) is not built (looked in \(candidates.map(\.path))); run swift build first")
    }

    /// This process's environment with `environment` added.
    static func merged(_ environment: [String: String]) -> [String: String] {
        ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    }

    /// Starts `name` with `arguments` and `environment` (added to this process's environment); its output
    /// goes to `log` when given.
    package static func start(_ name: String, arguments: [String] = [], environment: [String: String], log: URL? = nil) throws
        -> ChildProcess
    {
        let process = try SpawnedProcess.spawn(
            try binaryURL(name), arguments: arguments, environment: merged(environment), output: log.map { .file($0) } ?? .null)
        return ChildProcess(process: process)
    }

    /// Runs `name` to completion (input from the file `input` when given); returns its exit status and its
    /// standard output and error together.
    package static func run(_ name: String, arguments: [String], environment: [String: String], input: URL? = nil)
        async throws -> (status: Int32, output: String)
    {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("tollgate-run-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let process = try SpawnedProcess.spawn(
            try binaryURL(name), arguments: arguments, environment: merged(environment), input: input, output: .file(log))
        guard await process.waitForExit() else {
            process.send(SIGKILL)
            process.waitUntilExit()
            throw Failure(description: "\(name) \(arguments.joined(separator: " ")) did not finish within 120 s")
        }
        let output = (try? Data(contentsOf: log)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        return (process.terminationStatus, output)
    }

    /// SIGTERM; true when the process exited within `timeout`.
    package func terminate(timeout: Duration) async -> Bool {
        process.send(SIGTERM)
        return await process.waitForExit(timeout: timeout)
    }

    /// SIGKILL, then waits for the exit.
    package func kill() {
        process.send(SIGKILL)
        process.waitUntilExit()
    }

    /// A free TCP port on 127.0.0.1 (bind to 0, read it back, close).
    package static func freePort() throws -> Int {
        try RedisServer.freeLoopbackPort()
    }
}
