import AppStoreTesting
import Foundation
import Redis
import TestSupport
import Testing

extension TollgateSystemTests {
    /// Apple's `RESCIND_CONSENT` carries `appData` instead of `data`: the whole system verifies it (and its nested
    /// app transaction), tells the app's backend once on the events stream, and rejects every forged variant.
    @Suite struct AppNotificationTests {
        /// The events stream's entries about `appTransactionId`.
        static func entries(_ redis: SystemRedis, appTransactionId: String) async throws -> [StreamEntry] {
            try await redis.entries(of: "events").filter { $0.string("appTransactionId") == appTransactionId }
        }

        @Test(.logsOnFailure) func rescindConsentReachesTheEventsStreamOnceAndForgeriesNothing() async throws {
            let system = try SystemHarness.require()
            let ingest = system.ingestClient
            let sim = system.simClient
            let redis = system.redis

            // The simulator posts Apple's notification to ingest, as Apple would.
            let appTransactionId = "app-\(UUID().uuidString.lowercased())"
            let rescind = try await sim.rescindConsent(appTransactionId: appTransactionId)
            let found = try await eventuallyValue(timeout: .seconds(30), interval: .milliseconds(100)) {
                let entries = try await Self.entries(redis, appTransactionId: appTransactionId)
                return entries.isEmpty ? nil : entries
            }
            let entry = try #require(found?.first, "RESCIND_CONSENT never reached the events stream")
            #expect(entry.string("kind") == "notification")
            #expect(entry.string("type") == "RESCIND_CONSENT")
            #expect(entry.string("notificationUUID") == rescind.uuid)
            #expect(entry.string("environment") == "Production")
            #expect(entry.string("user") == nil)

            // Apple's retry of it is the same notification: finished, and nothing more on the stream.
            let retry = try await ingest.postNotification(rescind.body)
            #expect(retry.status == 200, "\(retry.text)")
            let retried = try await ingest.waitForJob(try #require(retry.json["jobId"] as? String), auth: .service)
            #expect(retried.status == "fulfilled", "\(retried)")

            // Variants signed with the simulator's (trusted) CA, and one nested app transaction from a stranger's CA.
            func app(_ id: String, bundleId: String = SystemHarness.bundleId, environment: String = "Production") -> [String: Any] {
                [
                    "receiptType": environment, "appAppleId": 1_234_567_890, "bundleId": bundleId, "applicationVersion": "1",
                    "appTransactionId": id, "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
                ]
            }
            func notification(_ parts: [String: Any]) -> [String: Any] {
                var object: [String: Any] = [
                    "notificationType": "RESCIND_CONSENT", "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0",
                    "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
                ]
                object.merge(parts) { _, new in new }
                return object
            }
            func appData(_ signedApp: String, bundleId: String = SystemHarness.bundleId, environment: String = "Production") -> [String:
                Any]
            {
                ["appAppleId": 1_234_567_890, "bundleId": bundleId, "environment": environment, "signedAppTransactionInfo": signedApp]
            }
            let evil = "evil-\(UUID().uuidString.lowercased())"
            let stranger = try TestCertificateAuthority().signer().sign(json: try JSONSerialization.data(withJSONObject: app(evil)))
            // What the notification itself says is checked at the door (issue 29 item 5): refused there, nothing stored.
            let refusedAtTheDoor: [(String, Int, [String: Any])] = [
                (
                    "wrong_bundle_id", 403,
                    notification(["appData": appData(try await sim.sign(app(evil, bundleId: "com.evil.app")), bundleId: "com.evil.app")])
                ),
                (
                    "sandbox_not_allowed", 403,
                    notification(["appData": appData(try await sim.sign(app(evil, environment: "Sandbox")), environment: "Sandbox")])
                ),
                (
                    "not_a_notification", 400,
                    notification([
                        "appData": appData(try await sim.sign(app(evil))),
                        "data": ["bundleId": SystemHarness.bundleId, "environment": "Production", "appAppleId": 1_234_567_890],
                    ])
                ),
                ("not_a_notification", 400, notification([:])),
            ]
            for (code, status, attack) in refusedAtTheDoor {
                let signed = try await sim.sign(attack)
                let answer = try await ingest.postNotification(Data(#"{"signedPayload":"\#(signed)"}"#.utf8))
                #expect(answer.status == status, "\(code): \(answer.text)")
                #expect((answer.json["error"] as? [String: Any])?["code"] as? String == code, "\(answer.text)")
            }
            // What it nests is the verifier's: a forged app transaction inside a genuine notification.
            let signed = try await sim.sign(notification(["appData": appData(stranger)]))
            let answer = try await ingest.postNotification(Data(#"{"signedPayload":"\#(signed)"}"#.utf8))
            #expect(answer.status == 200, "\(answer.text)")
            let outcome = try await ingest.waitForJob(try #require(answer.json["jobId"] as? String), auth: .service)
            #expect(outcome.status == "rejected", "\(outcome)")
            #expect(outcome.reason == "invalid_chain", "\(outcome)")
            #expect(try await Self.entries(redis, appTransactionId: evil).isEmpty)
            #expect(try await Self.entries(redis, appTransactionId: appTransactionId).count == 1)
            try await system.expectAuditClean()
        }
    }
}
