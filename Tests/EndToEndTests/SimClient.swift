import AppStore
import Foundation
import HTTPClient
import TestSupport

/// The simulator's control API (`/sim/purchases`, `/sim/events`, `/sim/notifications`, `/sim/sign`): what
/// customers and Apple do. Every purchase and event makes the simulator post Apple's signed notification to ingest.
struct SimClient: Sendable {
    let baseURL: String
    let http: URLSessionTransport

    /// What a purchase or an event produced.
    struct Answer: Sendable {
        var transactionId: String
        var originalTransactionId: String
        var receipt: String?
        var signedTransaction: String
        var signedPayload: String
        var notificationUUID: String
        /// The customer's order ID (the receipt email's), for Look Up Order ID.
        var orderId: String?

        /// The notification body exactly as the simulator posts it to ingest.
        var notificationBody: Data { Data(#"{"signedPayload":"\#(signedPayload)"}"#.utf8) }

        /// `expiresDate` (ms) of the signed transaction, read without verifying (the verifier verifies).
        var expiresDate: Int64? {
            guard let payload = signedTransaction.split(separator: ".").dropFirst().first,
                let bytes = Base64URL.decode(payload),
                let json = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
            else { return nil }
            return (json["expiresDate"] as? NSNumber)?.int64Value
        }
    }

    /// `POST /sim/purchases`.
    func purchase(
        _ productId: String, type: String, environment: String = "Production",
        appAccountToken: String? = nil, extra: [String: Any] = [:]
    ) async throws -> Answer {
        var body: [String: Any] = ["productId": productId, "type": type, "environment": environment]
        if let appAccountToken { body["appAccountToken"] = appAccountToken }
        body.merge(extra) { _, new in new }
        return try await post("/sim/purchases", body)
    }

    /// `POST /sim/events`: `type` (`DID_RENEW`, `REFUND`, …) happens to `transactionId`.
    func event(_ type: String, subtype: String? = nil, transactionId: String, extra: [String: Any] = [:]) async throws -> Answer {
        var body: [String: Any] = ["type": type, "transactionId": transactionId]
        if let subtype { body["subtype"] = subtype }
        body.merge(extra) { _, new in new }
        return try await post("/sim/events", body)
    }

    /// What Send Consumption Information recorded last for `transactionId` (`sim.endpoint` added), or nil.
    func consumption(_ transactionId: String) async throws -> [String: Any]? {
        guard let url = URL(string: baseURL + "/sim/consumption/\(transactionId)") else { return nil }
        let response = try await http.send(HTTPTransportRequest(method: .get, url: url, timeout: .seconds(10)))
        guard response.status == 200 else { return nil }
        return (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
    }

    /// The `deliveryStatus` of a notification (`pending`, `delivered`, `failed`, `disabled`).
    func deliveryStatus(_ notificationUUID: String) async throws -> String? {
        guard let url = URL(string: baseURL + "/sim/notifications/\(notificationUUID)") else { return nil }
        let response = try await http.send(HTTPTransportRequest(method: .get, url: url, timeout: .seconds(10)))
        let json = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
        return json?["deliveryStatus"] as? String
    }

    /// `POST /sim/notifications/rescind-consent`: Apple's `RESCIND_CONSENT` (with `appData`) for the app, posted to
    /// ingest; returns the notification's UUID and the body the simulator posts.
    func rescindConsent(appTransactionId: String, environment: String = "Production") async throws -> (uuid: String, body: Data) {
        let object = try await postJSON(
            "/sim/notifications/rescind-consent", ["appTransactionId": appTransactionId, "environment": environment])
        guard let uuid = object["notificationUUID"] as? String, let signedPayload = object["signedPayload"] as? String else {
            throw ChildProcess.Failure(description: "rescind-consent answered \(object)")
        }
        return (uuid, Data(#"{"signedPayload":"\#(signedPayload)"}"#.utf8))
    }

    /// `POST /sim/sign`: `payload` signed by the simulator's CA, as Apple signs its notifications.
    func sign(_ payload: [String: Any]) async throws -> String {
        let object = try await postJSON("/sim/sign", ["payload": payload])
        guard let jws = (object["jws"] as? [String])?.first else { throw ChildProcess.Failure(description: "sign answered \(object)") }
        return jws
    }

    /// The simulator's request counter `name` (e.g. `verifyReceipt.production`).
    func requestCount(_ name: String) async throws -> Int {
        guard let url = URL(string: baseURL + "/sim/faults") else { return 0 }
        let response = try await http.send(HTTPTransportRequest(method: .get, url: url, timeout: .seconds(10)))
        let json = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
        return ((json?["requests"] as? [String: Any])?[name] as? Int) ?? 0
    }

    private func postJSON(_ path: String, _ json: [String: Any]) async throws -> [String: Any] {
        guard let url = URL(string: baseURL + path) else { throw ChildProcess.Failure(description: "bad path \(path)") }
        let response = try await http.send(
            HTTPTransportRequest(
                method: .post, url: url, headers: ["Content-Type": "application/json"],
                body: try JSONSerialization.data(withJSONObject: json), timeout: .seconds(30)))
        guard (200..<300).contains(response.status), let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
        else {
            throw ChildProcess.Failure(
                description: "POST \(path) answered \(response.status): \(String(decoding: response.body.prefix(500), as: UTF8.self))")
        }
        return object
    }

    private func post(_ path: String, _ json: [String: Any]) async throws -> Answer {
        guard let url = URL(string: baseURL + path) else { throw ChildProcess.Failure(description: "bad path \(path)") }
        let response = try await http.send(
            HTTPTransportRequest(
                method: .post, url: url, headers: ["Content-Type": "application/json"],
                body: try JSONSerialization.data(withJSONObject: json), timeout: .seconds(30)))
        let text = String(decoding: response.body.prefix(1000), as: UTF8.self)
        guard (200..<300).contains(response.status),
            let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any],
            let transactionId = object["transactionId"] as? String,
            let signedTransaction = object["signedTransaction"] as? String,
            let signedPayload = object["signedPayload"] as? String,
            let uuid = object["notificationUUID"] as? String
        else {
            throw ChildProcess.Failure(description: "POST \(path) answered \(response.status): \(text)")
        }
        return Answer(
            transactionId: transactionId,
            originalTransactionId: object["originalTransactionId"] as? String ?? transactionId,
            receipt: object["receipt"] as? String, signedTransaction: signedTransaction,
            signedPayload: signedPayload, notificationUUID: uuid, orderId: object["orderId"] as? String)
    }
}
