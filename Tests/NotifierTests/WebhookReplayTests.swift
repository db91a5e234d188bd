import AppStore
import Foundation
import HTTPClient
import TestSupport
import Testing
import Webhooks

/// Issue 42 item 4: a captured request sent again — with a new `Tollgate-Event-Id`, or to another endpoint that
/// shares the secret — is not a new event. Receivers deduplicate on the signed body's `id`, and verify the `v2=`
/// signature, which also covers the endpoint's configured name.
@Suite(.timeLimit(.minutes(1)))
struct WebhookReplayTests {
    let body = Array(#"{"id":"e1"}"#.utf8)

    @Test func v2SignsTheEndpointsNameBesideV1AsPythonsHMACDoes() {
        // hmac.new(secret, b'1700000000.crm.' + body, hashlib.sha256).hexdigest()
        #expect(
            WebhookSignature.sign(body: body, secrets: ["whsec_a", "whsec_b"], timestamp: 1_700_000_000, endpoint: "crm")
                == "t=1700000000,v1=d042386a687c41e4eaaea974786a5c046c00d7ec67adadaf3a3f22f5ae96d573"
                + ",v1=3f9d11060396b09793c77f7c6b190bc17d6ef2129aa138ec3d928ebe5fc5d6ad"
                + ",v2=6e6f0cbc4a8e74db55eba1625f8bee6bfae31f4c0d690280b298c977585b97f0"
                + ",v2=fb79e44af25eaca32dac644c494ae3edf1c5cf11cdf384c3b176d8515805aa78")
    }

    @Test func aSignatureMadeForOneEndpointDoesNotVerifyAtAnotherSharingTheSecret() {
        let header = WebhookSignature.sign(body: body, secrets: [longSecret], timestamp: 1_700_000_000, endpoint: "crm")
        #expect(WebhookSignature.verify(header: header, body: body, secrets: [longSecret], endpoint: "crm", now: 1_700_000_010))
        #expect(!WebhookSignature.verify(header: header, body: body, secrets: [longSecret], endpoint: "bi", now: 1_700_000_010))
        // The v1= alone (the v2= stripped) is not enough for a receiver that knows its name.
        let v1Only = header.split(separator: ",").filter { !$0.hasPrefix("v2=") }.joined(separator: ",")
        #expect(!WebhookSignature.verify(header: v1Only, body: body, secrets: [longSecret], endpoint: "crm", now: 1_700_000_010))
    }

    /// The attack: a request captured on its way (or from the receiver's logs) is posted again with a fresh
    /// `Tollgate-Event-Id`. Its signature is still valid (within the 5 minutes), but the event is the same one.
    @Test func theReceiverScriptTakesAReplayWithANewEventIdHeaderAsADuplicate() async throws {
        let port = try ChildProcess.freePort()
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("receiver-\(UUID().uuidString).jsonl")
        try await WebhookReceiverProcess.with(port: port, secrets: [longSecret], log: log, endpoint: "crm") { _ in
            let sender = WebhookSender(transport: WebhookSender.makeTransport(connectionsPerHost: 1), timeout: .seconds(5))
            let target = endpoint(URL(string: "http://127.0.0.1:\(port)/hook")!, name: "crm", secrets: [longSecret])
            let event = Array(#"{"id":"evt_replayed","type":"purchase","userId":"u1","seq":1}"#.utf8)
            var request = sender.request(
                body: event, eventID: "evt_replayed", endpoint: target, timestamp: Int64(Date().timeIntervalSince1970))
            #expect(try await sender.transport.send(request).status == 204)
            request.headers["Tollgate-Event-Id"] = "evt_fresh_header"
            #expect(try await sender.transport.send(request).status == 204)
            let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
            #expect(lines.compactMap { WebhookReceiverProcess.eventID(of: $0) } == ["evt_replayed"])
            let output = try String(contentsOf: log.appendingPathExtension("out"), encoding: .utf8)
            #expect(output.contains("duplicate evt_replayed"), "\(output)")
        }
    }

    @Test func theReceiverScriptRefusesARequestSignedForAnotherEndpoint() async throws {
        let port = try ChildProcess.freePort()
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("receiver-\(UUID().uuidString).jsonl")
        try await WebhookReceiverProcess.with(port: port, secrets: [longSecret], log: log, endpoint: "bi") { _ in
            let sender = WebhookSender(transport: WebhookSender.makeTransport(connectionsPerHost: 1), timeout: .seconds(5))
            let url = URL(string: "http://127.0.0.1:\(port)/hook")!
            let event = Array(#"{"id":"evt_1","type":"purchase","userId":"u1","seq":1}"#.utf8)
            let now = Int64(Date().timeIntervalSince1970)
            // Captured at `crm`, which shares the secret with `bi`.
            let captured = sender.request(
                body: event, eventID: "evt_1", endpoint: endpoint(url, name: "crm", secrets: [longSecret]), timestamp: now)
            let replayed = try await sender.transport.send(captured)
            #expect(replayed.status == 401)
            let own = sender.request(
                body: event, eventID: "evt_1", endpoint: endpoint(url, name: "bi", secrets: [longSecret]), timestamp: now)
            let delivered = try await sender.transport.send(own)
            #expect(delivered.status == 204)
        }
    }
}
