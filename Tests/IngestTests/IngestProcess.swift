import AppStore
import AppStoreTesting
import Foundation
import HTTPClient
import Pipeline
import Redis
import TestSupport
import Testing

/// A running `ingest` executable (the real binary), its base URL and its log file: started by
/// ``withIngest(redisURL:environment:_:)`` and killed when the body returns, whatever happened.
struct IngestProcess {
    let process: ChildProcess
    let base: String
    let port: Int
    let log: URL
    let http = URLSessionTransport()

    func send(
        _ method: HTTPTransportRequest.Method, _ path: String, headers: [String: String] = [:],
        body: Data? = nil
    ) async throws -> HTTPTransportResponse {
        try await http.send(
            HTTPTransportRequest(
                method: method, url: try #require(URL(string: base + path)),
                headers: body == nil ? headers : headers.merging(["Content-Type": "application/json"]) { old, _ in old },
                body: body, timeout: .seconds(40)))
    }

    /// The same process reached on another port (its operators' listener).
    func on(port other: Int) -> IngestProcess {
        IngestProcess(process: process, base: "http://127.0.0.1:\(other)", port: other, log: log)
    }

    var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Starts `ingest` against `redisURL` with the test secrets, Apple's root and the test CA's, and
    /// `environment` on top; returns once `/readyz` answers 200 (on `TOLLGATE_OPS_PORT` when that is set).
    static func withIngest(
        redisURL: String, environment: [String: String] = [:], _ body: (IngestProcess) async throws -> Void
    ) async throws {
        let port = try ChildProcess.freePort()
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("tollgate-ingest-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let process = try ChildProcess.start(
            "ingest",
            environment: [
                "TOLLGATE_REDIS_URL": redisURL, "TOLLGATE_HTTP_HOST": "127.0.0.1", "TOLLGATE_HTTP_PORT": String(port),
                "TOLLGATE_CLIENT_JWT_SECRET": IngestHarness.secret, "TOLLGATE_SERVICE_KEYS": IngestHarness.serviceKey,
                "TOLLGATE_REDIS_COMMAND_TIMEOUT_MS": "10000",
                "TOLLGATE_ROOT_CERTS": try rootsFile().path, "TOLLGATE_BUNDLE_ID": IngestHarness.app.bundleId,
                "TOLLGATE_OPS_ON_PUBLIC_LISTENER": "true",
            ].merging(environment) { _, new in new }, log: log)
        defer { if process.process.isRunning { process.kill() } }
        let running = IngestProcess(process: process, base: "http://127.0.0.1:\(port)", port: port, log: log)
        try await running.waitUntilReady(on: environment["TOLLGATE_OPS_PORT"].flatMap(Int.init).map(running.on(port:)) ?? running)
        try await body(running)
    }

    /// Until `/readyz` answers 200 on `readiness`, and the main port answers at all (with `TOLLGATE_OPS_PORT` the two
    /// listeners start apart: a loaded machine has had the operators' one ready first).
    private func waitUntilReady(on readiness: IngestProcess) async throws {
        for _ in 0..<300 {
            if let response = try? await http.send(
                HTTPTransportRequest(
                    method: .get, url: try #require(URL(string: readiness.base + "/readyz")), timeout: .seconds(2))),
                response.status == 200,
                (try? await http.send(
                    HTTPTransportRequest(method: .get, url: try #require(URL(string: base + "/readyz")), timeout: .seconds(2))))
                    != nil
            {
                return
            }
            guard process.process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("ingest did not become ready: \(output.suffix(2000))")
        throw ChildProcess.Failure(description: "ingest not ready")
    }

    /// True once a new TCP connection to the main port is refused (checked with a plain `connect`, so that no
    /// client library reuses a kept-alive connection).
    func refusesConnections(within timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if RawConnection(port: port) == nil { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// A PEM file of Apple's root and the test CA's (for ``IngestHarness/distinctNotificationBody(_:)``).
    private static func rootsFile() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tollgate-ingest-roots-\(getpid()).pem")
        if FileManager.default.fileExists(atPath: url.path) { return url }
        let roots = [AppleRootCertificates.appleRootCAG3, try IngestHarness.testAuthority.get().rootDER, try Vectors.testSignedRootDER]
        let pem = roots.map { der in
            "-----BEGIN CERTIFICATE-----\n" + der.base64EncodedString(options: .lineLength64Characters) + "\n-----END CERTIFICATE-----\n"
        }.joined()
        try Data(pem.utf8).write(to: url)
        return url
    }
}

/// Redis as the binary tests watch it.
extension RedisConnection {
    /// Returns once Redis holds back `wanted` clients' commands whose arguments take at least `bytes`
    /// (`CLIENT LIST`: flag `b`, `argv-mem`). With a size, only an enqueue of that payload counts, not the
    /// small write ingest's backlog monitor makes every 500 ms (also held up while writes are paused).
    func waitForBlockedClients(_ wanted: Int = 1, argumentBytes bytes: Int = 0) async throws {
        for _ in 0..<500 {
            let clients = try await send("CLIENT", "LIST").string ?? ""
            let blocked = clients.split(whereSeparator: \.isNewline).filter { line in
                let fields = Dictionary(
                    line.split(separator: " ").compactMap { field -> (Substring, Substring)? in
                        guard let equals = field.firstIndex(of: "=") else { return nil }
                        return (field[..<equals], field[field.index(after: equals)...])
                    }
                ) { first, _ in first }
                return fields["flags"]?.contains("b") == true && Int(fields["argv-mem"] ?? "") ?? 0 >= bytes
            }
            if blocked.count >= wanted { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw ChildProcess.Failure(description: "no enqueue was ever held up by Redis")
    }

    /// The id of the first job in the jobs stream, once there is one.
    func firstJobID() async throws -> String {
        for _ in 0..<500 {
            if let id = try await xrange("tg:{p0}:jobs").first?.string(Job.Field.id) { return id }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ChildProcess.Failure(description: "the submission never reached the jobs stream")
    }
}
