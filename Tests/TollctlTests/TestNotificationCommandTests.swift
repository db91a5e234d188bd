import Core
import Foundation
import TestSupport
import Testing

/// `tollctl apple test-notification`, the real binary against the real simulator, which POSTs the signed TEST
/// notification to its notify URL (a stub standing in for ingest) and reports the send attempts.
@Suite(.serialized)
struct TestNotificationCommandTests {
    /// The `notificationType` of a V2 notification body `{"signedPayload"}`, read without verifying.
    static func notificationType(of body: Data) -> String? {
        guard let jws = JSONValue.read(body)?["signedPayload"]?.string
        else { return nil }
        let parts = jws.split(separator: ".")
        guard parts.count == 3 else { return nil }
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64) else { return nil }
        return JSONValue.read(data)?["notificationType"]?.string
    }

    /// Runs `tollctl apple test-notification --wait 10` against the simulator, whose notifications go to a stub
    /// receiver answering `status`; returns the run and what the receiver got.
    private func runTestNotification(
        receiverStatus status: Int
    ) async throws -> (status: Int32, output: String, delivered: [StubRecordedRequest]) {
        let receiver = try await StubHTTPServer.start()
        await receiver.respond(to: "/v1/apple/notifications", with: [StubResponse(status: status)])
        do {
            var result: (status: Int32, output: String) = (-1, "")
            try await StoreHarness.with(
                simEnvironment: ["SIM_NOTIFY_URL": receiver.url("/v1/apple/notifications").absoluteString]
            ) { harness in
                let run = try await ChildProcess.run(
                    "tollctl", arguments: ["apple", "test-notification", "--wait", "10"],
                    environment: harness.environment(try harness.apiSettings()))
                result = (run.status, run.output)
            }
            let delivered = await receiver.requests(to: "/v1/apple/notifications")
            await receiver.stop()
            return (result.status, result.output, delivered)
        } catch {
            await receiver.stop()
            throw error
        }
    }

    @Test func aDeliveredTestNotificationShowsItsTokenAndSuccessfulAttempt() async throws {
        let run = try await runTestNotification(receiverStatus: 200)
        let delivered = run.delivered
        #expect(run.status == 0, "\(run.output)")
        let token = try #require(run.output.split(separator: "\n").first { $0.hasPrefix("token ") }?.dropFirst(6))
        #expect(!token.isEmpty)
        #expect(run.output.contains(" SUCCESS\n"), "\(run.output)")
        #expect(run.output.contains("delivered"))
        #expect(delivered.count == 1)
        #expect(delivered.first.map { Self.notificationType(of: $0.body) } == "TEST")
    }

    @Test func anEndpointThatRefusesItIsReportedAsNotDelivered() async throws {
        let run = try await runTestNotification(receiverStatus: 503)
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("token "))
        #expect(run.output.contains(" UNSUCCESSFUL_HTTP_RESPONSE_CODE\n"), "\(run.output)")
        #expect(run.output.contains("not delivered"))
    }
}
