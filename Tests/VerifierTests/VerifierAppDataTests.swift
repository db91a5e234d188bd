import AppStore
import AppStoreTesting
import Core
import Foundation
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification

/// `RESCIND_CONSENT` (`appData`): the simulator's genuine notification becomes one event naming the app
/// transaction; every variant an attacker (or a confused sender) could make is rejected with its stable code and
/// hands nothing to the fulfiller.
@Suite(.serialized)
struct VerifierAppDataTests {
    static let bundleId = "com.example.app"
    static let appAppleId: Int64 = 1_234_567_890

    static func now() -> Int64 { Int64(Date().timeIntervalSince1970 * 1000) }

    static func app(bundleId: String = bundleId, environment: String = "Production", appTransactionId: String? = "app-tx-9") -> [String:
        Any]
    {
        var app: [String: Any] = [
            "receiptType": environment, "appAppleId": appAppleId, "bundleId": bundleId, "applicationVersion": "1",
            "signedDate": now(),
        ]
        app["appTransactionId"] = appTransactionId
        return app
    }

    static func notification(parts: [String: Any]) -> [String: Any] {
        var notification: [String: Any] = [
            "notificationType": "RESCIND_CONSENT", "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0",
            "signedDate": now(),
        ]
        notification.merge(parts) { _, new in new }
        return notification
    }

    static func appData(_ signedApp: String, bundleId: String = bundleId, environment: String = "Production") -> [String: Any] {
        ["appAppleId": appAppleId, "bundleId": bundleId, "environment": environment, "signedAppTransactionInfo": signedApp]
    }

    static func body(_ signedPayload: String) throws -> String {
        String(decoding: JSONValue.object(["signedPayload": .string(signedPayload)]).data, as: UTF8.self)
    }

    @Test func rescindConsentBecomesOneEventAndEveryForgeryIsRejected() async throws {
        try await VerifierHarness.with { harness in
            let sim = try TestCertificateAuthority(directory: harness.sim.directory.appendingPathComponent("ca")).signer()
            func sign(_ object: [String: Any]) throws -> String { try sim.sign(json: try JSONSerialization.data(withJSONObject: object)) }

            let genuine = try await harness.sim.post(
                "/sim/notifications/rescind-consent", ["environment": "Production", "appTransactionId": "app-tx-1"])
            #expect(genuine["notificationType"] as? String == "RESCIND_CONSENT")
            #expect(genuine["appTransactionId"] as? String == "app-tx-1")
            let signedPayload = try #require(genuine["signedPayload"] as? String)

            let attacker = try TestCertificateAuthority().signer()
            let forgedApp = try attacker.sign(json: try JSONSerialization.data(withJSONObject: Self.app()))
            let rightApp = try sign(Self.app())
            let attacks: [(String, [String: Any])] = [
                (
                    "wrong_bundle_id",
                    Self.notification(parts: [
                        "appData": Self.appData(try sign(Self.app(bundleId: "com.evil.app")), bundleId: "com.evil.app")
                    ])
                ),
                (
                    "sandbox_not_allowed",
                    Self.notification(parts: ["appData": Self.appData(try sign(Self.app(environment: "Sandbox")), environment: "Sandbox")])
                ),
                ("wrong_bundle_id", Self.notification(parts: ["appData": Self.appData(try sign(Self.app(bundleId: "com.evil.app")))])),
                ("invalid_chain", Self.notification(parts: ["appData": Self.appData(forgedApp)])),
                (
                    "ambiguous_notification_data",
                    Self.notification(parts: [
                        "appData": Self.appData(rightApp),
                        "data": ["bundleId": Self.bundleId, "environment": "Production", "appAppleId": Self.appAppleId],
                    ])
                ),
                ("missing_notification_data", Self.notification(parts: [:])),
            ]

            try await harness.withVerifier { _ in
                let job = try await harness.enqueue(kind: .notificationV2, payload: try Self.body(signedPayload), user: nil)
                let event = try #require(try await harness.waitForEvents(1).first)
                #expect(event.jobId == job)
                #expect(event.kind == .notificationV2)
                #expect(event.environment == "Production")
                #expect(event.transactions.isEmpty)
                #expect(event.notification?.type == "RESCIND_CONSENT")
                #expect(event.notification?.appTransactionId == "app-tx-1")
                #expect(event.notification?.notificationUUID == genuine["notificationUUID"] as? String)

                for (code, attack) in attacks {
                    let attackJob = try await harness.enqueue(kind: .notificationV2, payload: try Self.body(try sign(attack)), user: nil)
                    let status = try await harness.waitForStatus(attackJob) { $0["state"] == "rejected" }
                    #expect(status["reason"] == code, "\(status)")
                }
                // Apple's retry of the genuine one is the same notification: no second event.
                let retry = try await harness.enqueue(kind: .notificationV2, payload: try Self.body(signedPayload), user: nil)
                try await harness.waitForStatus(retry) { $0["state"] == "fulfilled" }

                // Issue 29 item 8: `appData` without an app transaction (Apple's library accepts it), or with one that
                // has no `appTransactionId`, is an app-level event about the app alone.
                var withoutApp = Self.appData("")
                withoutApp.removeValue(forKey: "signedAppTransactionInfo")
                let variants: [[String: Any]] = [
                    ["appData": withoutApp], ["appData": Self.appData(try sign(Self.app(appTransactionId: nil)))],
                ]
                for (index, parts) in variants.enumerated() {
                    let job = try await harness.enqueue(
                        kind: .notificationV2, payload: try Self.body(try sign(Self.notification(parts: parts))), user: nil)
                    let events = try await harness.waitForEvents(2 + index)
                    let event = try #require(events.last)
                    #expect(event.jobId == job)
                    #expect(event.notification?.type == "RESCIND_CONSENT")
                    #expect(event.notification?.appTransactionId == nil)
                }
            }
            #expect(try await harness.events().count == 3)
        }
    }
}
