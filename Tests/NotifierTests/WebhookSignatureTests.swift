import Foundation
import TestSupport
import Testing
import Webhooks

@Suite(.timeLimit(.minutes(1)))
struct WebhookSignatureTests {
    let body = Array(#"{"id":"e1"}"#.utf8)

    @Test func signsWithEverySecretAsPythonsHMACDoes() {
        // hmac.new(secret, b'1700000000.' + body, hashlib.sha256).hexdigest()
        #expect(
            WebhookSignature.sign(body: body, secrets: ["whsec_a", "whsec_b"], timestamp: 1_700_000_000, endpoint: "crm")
                .hasPrefix(
                    "t=1700000000,v1=d042386a687c41e4eaaea974786a5c046c00d7ec67adadaf3a3f22f5ae96d573"
                        + ",v1=3f9d11060396b09793c77f7c6b190bc17d6ef2129aa138ec3d928ebe5fc5d6ad,v2="))
    }

    @Test func verificationAcceptsEitherSecretOfARotationAndRefusesTheRest() {
        let header = WebhookSignature.sign(body: body, secrets: ["whsec_new", "whsec_old"], timestamp: 1_700_000_000, endpoint: "crm")
        #expect(WebhookSignature.verify(header: header, body: body, secrets: ["whsec_old"], endpoint: "crm", now: 1_700_000_010))
        #expect(WebhookSignature.verify(header: header, body: body, secrets: ["whsec_new"], endpoint: "crm", now: 1_700_000_010))
        #expect(!WebhookSignature.verify(header: header, body: body, secrets: ["whsec_other"], endpoint: "crm", now: 1_700_000_010))
        #expect(!WebhookSignature.verify(header: header, body: body + [0x20], secrets: ["whsec_new"], endpoint: "crm", now: 1_700_000_010))
        // Too old a timestamp (a replay).
        #expect(!WebhookSignature.verify(header: header, body: body, secrets: ["whsec_new"], endpoint: "crm", now: 1_700_001_000))
    }

    @Test func duringARotationTheReceiverScriptAcceptsWithOnlyTheOldSecret() async throws {
        try await NotifierRig.with(partitions: 1) { rig in
            let port = try ChildProcess.freePort()
            let log = FileManager.default.temporaryDirectory.appendingPathComponent("receiver-\(UUID().uuidString).jsonl")
            try await WebhookReceiverProcess.with(port: port, secrets: ["whsec_old"], log: log) { receiver in
                let event = try await rig.writer.append(user: "u1")
                let target = endpoint(
                    URL(string: "http://127.0.0.1:\(port)/hook")!, secrets: ["whsec_new", "whsec_old"])
                let replica = rig.replica(target, consumer: "r1")
                #expect(try await eventually { try await rig.cursor("crm", user: "u1") == 1 })
                try await replica.shutdown()
                let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
                #expect(lines.compactMap { WebhookReceiverProcess.eventID(of: $0) } == [event.eventID])
            }
        }
    }

    @Test func theReceiverScriptRefusesAWrongSignature() async throws {
        try await NotifierRig.with(partitions: 1) { rig in
            let port = try ChildProcess.freePort()
            let log = FileManager.default.temporaryDirectory.appendingPathComponent("receiver-\(UUID().uuidString).jsonl")
            try await WebhookReceiverProcess.with(port: port, secrets: ["whsec_right"], log: log) { receiver in
                try await rig.writer.append(user: "u1")
                let replica = rig.replica(endpoint(URL(string: "http://127.0.0.1:\(port)/hook")!, secrets: ["whsec_wrong"]), consumer: "r1")
                // Until the receiver has refused an attempt (a fixed 500 ms was too short on a loaded CI machine).
                let out = log.appendingPathExtension("out")
                let refused = await eventually(timeout: .seconds(20)) {
                    ((try? String(contentsOf: out, encoding: .utf8)) ?? "").contains("401 bad signature")
                }
                try await replica.shutdown()
                #expect(refused, "\((try? String(contentsOf: out, encoding: .utf8)) ?? "")")
                #expect(try await rig.cursor("crm", user: "u1") == 0)
                #expect(((try? String(contentsOf: log, encoding: .utf8)) ?? "").isEmpty)
            }
        }
    }
}
