import AppStore
import AppStoreTesting
import Foundation
import HTTPClient
import Hummingbird
import Logging
import NIOCore
import TestSupport

@testable import appstore_sim

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A real `appstore-sim` application on `127.0.0.1` and a free port, driven over HTTP.
final class SimHarness: Sendable {
    let port: Int
    let authority: TestCertificateAuthority
    private let task: Task<Void, any Error>
    private let transport = URLSessionTransport()

    private init(port: Int, authority: TestCertificateAuthority, task: Task<Void, any Error>) {
        self.port = port
        self.authority = authority
        self.task = task
    }

    static func start(_ configure: (inout SimConfiguration) -> Void = { _ in }) async throws -> SimHarness {
        var configuration = SimConfiguration()
        configuration.port = 0
        configure(&configuration)
        let authority = try TestCertificateAuthority()
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = buildApplication(
            configuration: configuration, authority: authority, logger: testLogger,
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            })
        let task = Task { try await app.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            task.cancel()
            throw SimHarnessError(message: "the simulator did not start")
        }
        return SimHarness(port: port, authority: authority, task: task)
    }

    func stop() async {
        task.cancel()
        _ = try? await task.value
    }

    /// Runs `body` with a started simulator and stops it afterwards, awaited, whether `body` throws or not (a
    /// `defer { Task { await stop() } }` left the stop to run after the test had ended).
    static func with<T>(
        _ configure: (inout SimConfiguration) -> Void = { _ in }, _ body: (SimHarness) async throws -> T
    ) async throws -> T {
        try await withStarted(try await start(configure), stop: { await $0.stop() }, body)
    }

    func url(_ path: String) -> URL {
        URL(string: "http://127.0.0.1:\(port)\(path)") ?? URL(fileURLWithPath: "/")
    }

    /// One HTTP exchange with the simulator.
    func send(
        _ method: HTTPTransportRequest.Method, _ path: String, json: Any? = nil, body: Data? = nil,
        headers: [String: String] = [:], timeout: Duration = .seconds(10)
    ) async throws -> HTTPTransportResponse {
        var data = body
        if let json { data = try JSONSerialization.data(withJSONObject: json) }
        var headers = headers
        if data != nil { headers["Content-Type"] = "application/json" }
        return try await transport.send(
            HTTPTransportRequest(method: method, url: url(path), headers: headers, body: data, timeout: timeout))
    }

    /// POSTs JSON and returns the status and the JSON object answered.
    func post(_ path: String, _ json: Any, headers: [String: String] = [:]) async throws -> (status: Int, body: [String: Any]) {
        let response = try await send(.post, path, json: json, headers: headers)
        return (response.status, (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:])
    }

    func get(_ path: String, headers: [String: String] = [:]) async throws -> (status: Int, body: [String: Any]) {
        let response = try await send(.get, path, headers: headers)
        return (response.status, (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any] ?? [:])
    }

    /// Buys a product through `POST /sim/purchases`.
    func purchase(
        type: String = "Consumable", productId: String = "com.example.coins100", environment: String = "Production",
        extra: [String: Any] = [:]
    ) async throws -> Purchase {
        var body: [String: Any] = ["productId": productId, "type": type, "environment": environment]
        body.merge(extra) { _, new in new }
        let (status, json) = try await post("/sim/purchases", body)
        guard status == 201, let id = json["transactionId"] as? String, let receipt = json["receipt"] as? String,
            let signed = json["signedTransaction"] as? String, let payload = json["signedPayload"] as? String,
            let uuid = json["notificationUUID"] as? String, let orderId = json["orderId"] as? String
        else {
            throw SimHarnessError(message: "purchase failed: \(status) \(json)")
        }
        return Purchase(
            transactionId: id, receipt: receipt, orderId: orderId, signedTransaction: signed, signedPayload: payload,
            notificationUUID: uuid)
    }

    /// Sends an event through `POST /sim/events`; throws unless it is accepted.
    @discardableResult
    func event(_ type: String, _ transactionId: String, subtype: String? = nil, extra: [String: Any] = [:]) async throws -> [String: Any] {
        var body: [String: Any] = ["type": type, "transactionId": transactionId]
        if let subtype { body["subtype"] = subtype }
        body.merge(extra) { _, new in new }
        let (status, json) = try await post("/sim/events", body)
        guard status == 200 else { throw SimHarnessError(message: "event \(type) failed: \(status) \(json)") }
        return json
    }

    /// `GET /sim/faults` `requests` counters.
    func requestCount(_ counter: String) async throws -> Int {
        let (_, json) = try await get("/sim/faults")
        return ((json["requests"] as? [String: Any])?[counter] as? Int) ?? 0
    }

    /// `DELETE` (which the Apple transport does not need); returns the HTTP status.
    func delete(_ path: String) async throws -> Int {
        var request = URLRequest(url: url(path))
        request.httpMethod = "DELETE"
        let (_, response) = try await URLSession.shared.data(for: request)
        return (response as? HTTPURLResponse)?.statusCode ?? 0
    }

    /// The root certificate served at `/sim/root.der`.
    func rootDER() async throws -> Data {
        try await send(.get, "/sim/root.der").body
    }
}

/// What `POST /sim/purchases` answered.
struct Purchase: Sendable {
    var transactionId: String
    var receipt: String
    var orderId: String
    var signedTransaction: String
    var signedPayload: String
    var notificationUUID: String
}

struct SimHarnessError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
