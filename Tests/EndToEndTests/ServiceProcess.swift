import AppStore
import Foundation
import HTTPClient
import TestSupport

/// One real executable of the system under test (`ingest`, `appstore-sim`, a `verifier` or `fulfiller`
/// replica) on its own loopback port, writing its output to a log file in the system's directory.
struct ServiceProcess: Sendable {
    /// What to start: the executable, and its arguments and environment for a given port.
    struct Spec: Sendable {
        /// The name in logs and failure reports, e.g. `verifier-2`.
        var name: String
        var executable: String
        var arguments: @Sendable (Int) -> [String] = { _ in [] }
        var environment: @Sendable (Int) -> [String: String]
        /// The path answering `200` once the process is ready (`/readyz`, `/healthz`, `/sim/health`).
        var readinessPath: String
    }

    let name: String
    let port: Int
    let child: ChildProcess
    let log: URL

    var isRunning: Bool { child.process.isRunning }
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Starts `spec` on a free port and waits until it answers its readiness path. A process that exits at
    /// start (most likely its port was taken meanwhile) is retried on another port.
    static func launch(
        _ spec: Spec, in directory: URL, http: URLSessionTransport,
        readyWithin timeout: Duration = .seconds(40)
    ) async throws -> ServiceProcess {
        let log = directory.appendingPathComponent("\(spec.name).log")
        var attempts = 0
        while true {
            attempts += 1
            let port = try ChildProcess.freePort()
            let child = try ChildProcess.start(
                spec.executable, arguments: spec.arguments(port),
                environment: spec.environment(port), log: log)
            let service = ServiceProcess(name: spec.name, port: port, child: child, log: log)
            do {
                if try await service.waitUntilReady(spec.readinessPath, http: http, timeout: timeout) { return service }
            } catch {
                child.kill()  // cancelled: never leave a process behind
                throw error
            }
            let exited = !child.process.isRunning
            child.kill()
            if !exited || attempts >= 3 {
                throw ChildProcess.Failure(
                    description: "\(spec.name) did not become ready on port \(port) "
                        + "(\(exited ? "exited" : "timed out")); its log:\n\(service.tail(lines: 30))")
            }
        }
    }

    /// Polls the readiness path until it answers `200` (true), the process exits or the time is up (false).
    private func waitUntilReady(_ path: String, http: URLSessionTransport, timeout: Duration) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        guard let url = URL(string: baseURL + path) else { return false }
        while child.process.isRunning, ContinuousClock.now < deadline {
            let response = try? await http.send(HTTPTransportRequest(method: .get, url: url, timeout: .seconds(2)))
            if response?.status == 200 { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// SIGTERM, then SIGKILL when it does not exit within `grace`.
    func stop(grace: Duration = .seconds(5)) async {
        if await !child.terminate(timeout: grace) { child.kill() }
    }

    /// The last `lines` lines of the log.
    func tail(lines: Int) -> String {
        guard let data = FileManager.default.contents(atPath: log.path) else { return "(no log)" }
        let text = String(decoding: data, as: UTF8.self)
        return text.split(separator: "\n", omittingEmptySubsequences: false).suffix(lines).joined(separator: "\n")
    }
}
