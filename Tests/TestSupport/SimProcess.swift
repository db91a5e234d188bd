package import AppStore
import Core
package import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
package import HTTPClient
#endif

/// The real `appstore-sim` binary on a free loopback port, with its CA in a temporary directory (whose
/// `root.der` the verifier trusts through `TOLLGATE_ROOT_CERTS`).
package final class SimProcess: Sendable {
    package let port: Int
    package let directory: URL
    package let child: ChildProcess
    package let transport = URLSessionTransport()

    private init(port: Int, directory: URL, child: ChildProcess) {
        self.port = port
        self.directory = directory
        self.child = child
    }

    /// Starts the simulator; `environment` adds settings (e.g. `SIM_NOTIFY_URL`).
    package static func start(environment: [String: String] = [:]) async throws -> SimProcess {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tollgate-sim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for _ in 0..<3 {
            let port = try ChildProcess.freePort()
            let child = try ChildProcess.start(
                "appstore-sim", arguments: ["--ca-dir", directory.appendingPathComponent("ca").path],
                environment: ["SIM_PORT": String(port), "SIM_HOST": "127.0.0.1", "LOG_LEVEL": "warning"].merging(environment) { _, new in
                    new
                },
                log: directory.appendingPathComponent("sim.log"))
            let sim = SimProcess(port: port, directory: directory, child: child)
            let deadline = ContinuousClock.now + .seconds(15)
            while ContinuousClock.now < deadline, child.process.isRunning {
                if let response = try? await sim.send(.get, "/sim/health", timeout: .seconds(1)), response.status == 200 {
                    return sim
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            child.kill()
        }
        throw ChildProcess.Failure(description: "appstore-sim did not start; see \(directory.path)/sim.log")
    }

    package func stop() {
        child.kill()
        try? FileManager.default.removeItem(at: directory)
    }

    package var rootCertificatePath: String { directory.appendingPathComponent("ca/root.der").path }
    package var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The verifier settings that point at this simulator.
    package var environment: [String: String] {
        [
            "TOLLGATE_ROOT_CERTS": rootCertificatePath,
            "TOLLGATE_RECEIPT_INTERMEDIATE_CERTS": directory.appendingPathComponent("ca/intermediate.der").path,
            "TOLLGATE_VERIFY_RECEIPT_URL": "\(baseURL)/verifyReceipt",
            "TOLLGATE_VERIFY_RECEIPT_SANDBOX_URL": "\(baseURL)/sandbox/verifyReceipt",
            "TOLLGATE_APPSTORE_API_URL": baseURL,
            "TOLLGATE_APPSTORE_API_SANDBOX_URL": "\(baseURL)/sandbox",
            "TOLLGATE_BUNDLE_ID": "com.example.app",
            "TOLLGATE_APP_APPLE_ID": "1234567890",
            "TOLLGATE_ENVIRONMENT": "production",
        ]
    }

    package func send(_ method: HTTPTransportRequest.Method, _ path: String, json: Any? = nil, timeout: Duration = .seconds(10))
        async throws -> HTTPTransportResponse
    {
        let body = try json.map { try JSONSerialization.data(withJSONObject: $0) }
        let url = URL(string: baseURL + path) ?? URL(fileURLWithPath: "/")
        return try await transport.send(
            HTTPTransportRequest(
                method: method, url: url, headers: body == nil ? [:] : ["Content-Type": "application/json"], body: body, timeout: timeout))
    }

    /// POSTs JSON; returns the JSON object answered, throwing unless the status is 2xx.
    @discardableResult
    package func post(_ path: String, _ json: [String: Any]) async throws -> [String: Any] {
        let response = try await send(.post, path, json: json)
        guard (200..<300).contains(response.status) else {
            throw ChildProcess.Failure(description: "POST \(path) answered \(response.status)")
        }
        return (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:]
    }

    /// Buys a product; returns the simulator's answer (transactionId, receipt, signedTransaction, signedPayload…).
    @discardableResult
    package func purchase(_ extra: [String: Any] = [:]) async throws -> [String: Any] {
        var body: [String: Any] = ["productId": "com.example.coins100", "type": "Consumable", "environment": "Production"]
        body.merge(extra) { _, new in new }
        return try await post("/sim/purchases", body)
    }

    /// The simulator's request counter `name` (e.g. `verifyReceipt.production`).
    package func requestCount(_ name: String) async throws -> Int {
        let response = try await send(.get, "/sim/faults")
        return JSONValue.read(response.body)?["requests"]?[name]?.int ?? 0
    }

    package func clearFaults() async throws {
        var request = URLRequest(url: URL(string: baseURL + "/sim/faults") ?? URL(fileURLWithPath: "/"))
        request.httpMethod = "DELETE"
        _ = try await URLSession.shared.data(for: request)
    }
}

/// Runs `body` with the real `appstore-sim` started on a free loopback port, and always stops it (and removes its
/// directory) afterwards, even when `body` throws. `environment` adds simulator settings.
package func withSim<T>(environment: [String: String] = [:], _ body: (SimProcess) async throws -> T) async throws -> T {
    try await withStarted(try await SimProcess.start(environment: environment), stop: { $0.stop() }, body)
}
