import Foundation
import TestSupport
import Testing

/// `tollctl apple test-notification`, the real binary against the real simulator, which POSTs the signed TEST
/// notification to its notify URL (a stub standing in for ingest) and reports the send attempts.
@Suite(.serialized)
struct TestNotificationCommandTests {
    /// The `notificationType` of a V2 notification body `{"signedPayload"}`, read without verifying.
    static func notificationType(of body: Data) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
            let jws = object["signedPayload"] as? String
        else { return nil }
        let parts = jws.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        return (try? JSONSerialization.jsonObject(with: data) as? [String: Any])?["notificationType"] as? String
    }

    @Test func aDeliveredTestNotificationShowsItsTokenAndSuccessfulAttempt() async throws {
        let receiver = try await StubHTTPServer.start()
        await receiver.respond(to: "/v1/apple/notifications", with: [StubResponse(status: 200)])
        do {
            try await StoreHarness.with(simEnvironment: ["SIM_NOTIFY_URL": receiver.url("/v1/apple/notifications").absoluteString]) {
                harness in
                let environment = harness.environment(try harness.apiSettings())
                let run = try await ChildProcess.run(
                    "tollctl", arguments: ["apple", "test-notification", "--wait", "10"], environment: environment)
                #expect(run.status == 0, "\(run.output)")
                let token = try #require(run.output.split(separator: "\n").first { $0.hasPrefix("token ") }?.dropFirst(6))
                #expect(!token.isEmpty)
                #expect(run.output.contains(" SUCCESS\n"), "\(run.output)")
                #expect(run.output.contains("delivered"))
                let delivered = await receiver.requests(to: "/v1/apple/notifications")
                #expect(delivered.count == 1)
                #expect(delivered.first.map { Self.notificationType(of: $0.body) } == "TEST")
            }
        } catch {
            await receiver.stop()
            throw error
        }
        await receiver.stop()
    }

    @Test func anEndpointThatRefusesItIsReportedAsNotDelivered() async throws {
        let receiver = try await StubHTTPServer.start()
        await receiver.respond(to: "/v1/apple/notifications", with: [StubResponse(status: 503)])
        do {
            try await StoreHarness.with(simEnvironment: ["SIM_NOTIFY_URL": receiver.url("/v1/apple/notifications").absoluteString]) {
                harness in
                let environment = harness.environment(try harness.apiSettings())
                let run = try await ChildProcess.run(
                    "tollctl", arguments: ["apple", "test-notification", "--wait", "10"], environment: environment)
                #expect(run.status == 1, "\(run.output)")
                #expect(run.output.contains("token "))
                #expect(run.output.contains(" UNSUCCESSFUL_HTTP_RESPONSE_CODE\n"), "\(run.output)")
                #expect(run.output.contains("not delivered"))
            }
        } catch {
            await receiver.stop()
            throw error
        }
        await receiver.stop()
    }
}
