import AppStore
import Foundation
import HTTPClient
import Ledger
import TestSupport

/// ingest's public HTTP API as an app (user tokens), its backend (the service key) and Apple use it.
struct IngestClient: Sendable {
    let baseURL: String
    let http: URLSessionTransport

    /// An HTTP answer; `json` is the body as a JSON object (empty when it is not one).
    struct Reply: Sendable {
        var status: Int
        var body: Data

        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:] }
        var errorCode: String? { (json["error"] as? [String: Any])?["code"] as? String }
        var text: String { String(decoding: body.prefix(2000), as: UTF8.self) }
    }

    /// A job's final status as `GET /v1/jobs/{id}` (or `?wait=`) reports it.
    struct JobOutcome: Sendable, CustomStringConvertible {
        var jobId: String
        var status: String
        var reason: String?
        var body: Data

        /// The fulfiller's `result` object (`outcome`, `coins`, `transactions`, `unparked`).
        var result: [String: Any] {
            let json = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
            return json?["result"] as? [String: Any] ?? [:]
        }
        /// `result.transactions[].result`, e.g. `applied`, `duplicate`.
        var transactionResults: [String] {
            (result["transactions"] as? [[String: Any]] ?? []).compactMap { $0["result"] as? String }
        }
        var description: String { String(decoding: body.prefix(2000), as: UTF8.self) }
    }

    enum Auth {
        case user(String)
        /// A user of the project whose user tokens `secret` signs (``SystemHarness/Options/twoProjects``).
        case userSigned(String, secret: String)
        case service
        /// The `games` project's service key (``SystemHarness/Options/twoProjects``).
        case gamesService
        case none

        var headers: [String: String] {
            switch self {
            case .user(let id): ["Authorization": "Bearer \(UserToken.make(user: id))"]
            case .userSigned(let id, let secret): ["Authorization": "Bearer \(UserToken.make(user: id, secret: secret))"]
            case .service: ["X-Api-Key": SystemHarness.serviceKey]
            case .gamesService: ["X-Api-Key": SystemHarness.gamesServiceKey]
            case .none: [:]
            }
        }
    }

    /// Sends a request; a `503` (Redis stalled, e.g. a slow fsync on a loaded machine) is retried after its
    /// `Retry-After` (at most 1 s) for up to 30 s, as an app or Apple would (submissions are idempotent).
    func send(
        _ method: HTTPTransportRequest.Method, _ path: String, auth: Auth, body: Data? = nil,
        timeout: Duration = .seconds(45)
    ) async throws -> Reply {
        guard let url = URL(string: baseURL + path) else { throw ChildProcess.Failure(description: "bad path \(path)") }
        var headers = auth.headers
        if body != nil { headers["Content-Type"] = "application/json" }
        let request = HTTPTransportRequest(method: method, url: url, headers: headers, body: body, timeout: timeout)
        let deadline = ContinuousClock.now + .seconds(30)
        var response = try await http.send(request)
        while response.status == 503, ContinuousClock.now < deadline {
            let seconds = min(1, Double(response.header("Retry-After") ?? "") ?? 0.2)
            try await Task.sleep(for: .seconds(seconds))
            response = try await http.send(request)
        }
        return Reply(status: response.status, body: response.body)
    }

    func post(_ path: String, auth: Auth, json: [String: Any]) async throws -> Reply {
        try await send(.post, path, auth: auth, body: try JSONSerialization.data(withJSONObject: json))
    }

    /// `POST /v1/orders`: `(orderNo, appAccountToken)`.
    func createOrder(user: String, productId: String) async throws -> (orderNo: String, appAccountToken: String) {
        let reply = try await post("/v1/orders", auth: .user(user), json: ["productId": productId])
        guard reply.status == 201, let orderNo = reply.json["orderNo"] as? String,
            let token = reply.json["appAccountToken"] as? String
        else {
            throw ChildProcess.Failure(description: "POST /v1/orders answered \(reply.status): \(reply.text)")
        }
        return (orderNo, token)
    }

    /// `POST /v1/receipts?wait=` then, if the wait ran out, `GET /v1/jobs/{id}` until the job is final.
    func submitReceipt(user: String, receipt: String, orderNo: String? = nil) async throws -> JobOutcome {
        var body: [String: Any] = ["receipt": receipt]
        if let orderNo { body["orderNo"] = orderNo }
        return try await submit("/v1/receipts", user: user, body: body)
    }

    /// `POST /v1/transactions?wait=` (a StoreKit 2 JWS), then like ``submitReceipt(user:receipt:orderNo:)``; `secret`
    /// signs the user's token (another project's, ``SystemHarness/Options/twoProjects``).
    func submitTransaction(
        user: String, signedTransaction: String, orderNo: String? = nil, secret: String = SystemHarness.clientJWTSecret
    ) async throws -> JobOutcome {
        var body: [String: Any] = ["signedTransaction": signedTransaction]
        if let orderNo { body["orderNo"] = orderNo }
        return try await submit("/v1/transactions", auth: .userSigned(user, secret: secret), body: body)
    }

    private func submit(_ path: String, user: String, body: [String: Any]) async throws -> JobOutcome {
        try await submit(path, auth: .user(user), body: body)
    }

    private func submit(_ path: String, auth: Auth, body: [String: Any]) async throws -> JobOutcome {
        let reply = try await post(path + "?wait=20", auth: auth, json: body)
        guard [200, 202].contains(reply.status), let jobId = reply.json["jobId"] as? String else {
            throw ChildProcess.Failure(description: "POST \(path) answered \(reply.status): \(reply.text)")
        }
        if reply.status == 200, let outcome = Self.final(reply) { return outcome }
        return try await waitForJob(jobId, auth: auth)
    }

    /// Polls `GET /v1/jobs/{id}` until the status is final (fulfilled, rejected, dead) or 60 s pass.
    func waitForJob(_ jobId: String, auth: Auth, until accept: @Sendable (JobOutcome) -> Bool = { _ in true }) async throws -> JobOutcome {
        let deadline = ContinuousClock.now + .seconds(60)
        var last = "no answer"
        while ContinuousClock.now < deadline {
            let reply = try await send(.get, "/v1/jobs/\(jobId)", auth: auth)
            last = "\(reply.status) \(reply.text)"
            if reply.status == 200, let outcome = Self.final(reply), accept(outcome) { return outcome }
            if (400..<500).contains(reply.status) { break }  // a job's status exists from its enqueue on
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ChildProcess.Failure(description: "job \(jobId) did not reach the expected final state; last: \(last)")
    }

    private static func final(_ reply: Reply) -> JobOutcome? {
        let json = reply.json
        guard let jobId = json["jobId"] as? String, let status = json["status"] as? String,
            ["fulfilled", "rejected", "dead"].contains(status)
        else { return nil }
        return JobOutcome(jobId: jobId, status: status, reason: json["reason"] as? String, body: reply.body)
    }

    /// `GET /v1/users/{id}/entitlements` as that user (of the project whose user tokens `secret` signs).
    func entitlements(user: String, secret: String = SystemHarness.clientJWTSecret) async throws -> EntitlementsView {
        let reply = try await send(.get, "/v1/users/\(user)/entitlements", auth: .userSigned(user, secret: secret))
        guard reply.status == 200 else {
            throw ChildProcess.Failure(description: "GET entitlements answered \(reply.status): \(reply.text)")
        }
        return try JSONDecoder().decode(EntitlementsView.self, from: reply.body)
    }

    /// One schema-v2 event as `GET /v1/users/{id}/events` answers it (the members these tests read).
    struct UserEvent: Decodable, Sendable {
        var id: String
        var type: String
        var seq: Int
        var transactionId: String?
        var price: Int64?
        var currency: String?
        var delta: Int?
        var balance: Int?
    }

    /// `GET /v1/users/{id}/events?after=…` as the app's backend (service key).
    func events(user: String, after: Int = 0) async throws -> [UserEvent] {
        struct Page: Decodable { var events: [UserEvent] }
        let reply = try await send(.get, "/v1/users/\(user)/events?after=\(after)", auth: .service)
        guard reply.status == 200 else {
            throw ChildProcess.Failure(description: "GET events answered \(reply.status): \(reply.text)")
        }
        return try JSONDecoder().decode(Page.self, from: reply.body).events
    }

    /// `PUT /v1/users/{id}/consent` as the app's backend (service key).
    func recordConsent(user: String, consented: Bool) async throws -> Reply {
        try await send(
            .put, "/v1/users/\(user)/consent", auth: .service,
            body: try JSONSerialization.data(withJSONObject: ["consented": consented]))
    }

    /// `POST /v1/apple/notifications` with `body`, as Apple sends it.
    func postNotification(_ body: Data) async throws -> Reply {
        try await send(.post, "/v1/apple/notifications", auth: .none, body: body)
    }
}
