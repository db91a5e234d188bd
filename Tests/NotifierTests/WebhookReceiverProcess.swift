import Core
import Foundation
import TestSupport

#if canImport(Glibc)
import Glibc
#endif

/// `scripts/webhook-receiver` run as a child process (python3).
struct WebhookReceiverProcess {
    let process: SpawnedProcess

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("scripts/webhook-receiver")

    /// Starts the receiver on `port` as endpoint `endpoint` (the name its `v2=` signatures cover) accepting `secrets`,
    /// logging accepted events to `log`, and waits until it listens (suspending, never blocking a thread of the
    /// cooperative pool: a blocked thread stalls every other test).
    static func start(
        port: Int, secrets: [String], log: URL, endpoint: String = "crm", extra: [String] = []
    ) async throws -> WebhookReceiverProcess {
        let arguments =
            [script.path, "--port", String(port), "--log", log.path, "--endpoint", endpoint] + secrets.flatMap { ["--secret", $0] }
            + extra
        let output = log.appendingPathExtension("out")
        let process = try SpawnedProcess.spawn(
            URL(fileURLWithPath: "/usr/bin/env"), arguments: ["python3"] + arguments,
            environment: ProcessInfo.processInfo.environment, output: .file(output))
        let receiver = WebhookReceiverProcess(process: process)
        for _ in 0..<200 {
            if let text = try? String(contentsOf: output, encoding: .utf8), text.contains("listening") { return receiver }
            try await Task.sleep(for: .milliseconds(25))
        }
        await receiver.stop()
        throw ChildProcess.Failure(description: "webhook-receiver did not listen on \(port)")
    }

    /// Runs `body` with a receiver started as ``start(port:secrets:log:endpoint:extra:)`` does, and stops it (awaited)
    /// afterwards, even when `body` throws.
    @discardableResult
    static func with<T>(
        port: Int, secrets: [String], log: URL, endpoint: String = "crm", extra: [String] = [],
        _ body: (WebhookReceiverProcess) async throws -> T
    ) async throws -> T {
        try await withStarted(
            try await start(port: port, secrets: secrets, log: log, endpoint: endpoint, extra: extra), stop: { await $0.stop() }, body)
    }

    func stop() async {
        kill(process.processIdentifier, SIGTERM)
        _ = await process.waitForExit(timeout: .seconds(30))
    }

    /// The `id` of one logged event line.
    static func eventID(of line: Substring) -> String? {
        JSONValue.read(Array(line.utf8))?["id"]?.string
    }
}
