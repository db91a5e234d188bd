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

    /// Starts the receiver on `port` accepting `secrets`, logging accepted events to `log`, and waits until it listens.
    static func start(port: Int, secrets: [String], log: URL, extra: [String] = []) throws -> WebhookReceiverProcess {
        let arguments = [script.path, "--port", String(port), "--log", log.path] + secrets.flatMap { ["--secret", $0] } + extra
        let output = log.appendingPathExtension("out")
        let process = try SpawnedProcess.spawn(
            URL(fileURLWithPath: "/usr/bin/env"), arguments: ["python3"] + arguments,
            environment: ProcessInfo.processInfo.environment, output: .file(output))
        let receiver = WebhookReceiverProcess(process: process)
        for _ in 0..<200 {
            if let text = try? String(contentsOf: output, encoding: .utf8), text.contains("listening") { return receiver }
            Thread.sleep(forTimeInterval: 0.025)
        }
        receiver.stop()
        throw ChildProcess.Failure(description: "webhook-receiver did not listen on \(port)")
    }

    func stop() {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
    }

    /// The `id` of one logged event line.
    static func eventID(of line: Substring) -> String? {
        JSONValue.read(Array(line.utf8))?["id"]?.string
    }
}
