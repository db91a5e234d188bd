import AppStore
@preconcurrency import Crypto
import Foundation
import TestSupport
import Testing

@testable import appstore_sim

@Suite("V2 notification delivery")
struct NotificationDeliveryTests {
    /// Polls `/sim/notifications/{uuid}` until `done` holds or 10 s pass.
    static func waitFor(_ sim: SimHarness, _ uuid: String, _ done: ([String: Any]) -> Bool) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let (_, body) = try await sim.get("/sim/notifications/\(uuid)")
            if done(body) { return body }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw SimHarnessError(message: "notification \(uuid) did not reach the expected state")
    }

    static func results(_ body: [String: Any]) -> [String] {
        (body["sendAttempts"] as? [[String: Any]] ?? []).compactMap { $0["sendAttemptResult"] as? String }
    }

    @Test func failedAttemptsAreRetriedOnTheScaledScheduleAndListedInHistory() async throws {
        try await withStubServer { receiver in
            await receiver.respond(to: "/apple", with: [.json("{}", status: 500), .json("{}", status: 500), .json("{}")])
            try await SimHarness.with({
                $0.notifyURL = receiver.url("/apple")
                $0.retryScale = 36_000  // 1 h -> 0.1 s, 12 h -> 1.2 s
            }) { sim in
                let started = ContinuousClock.now
                let purchase = try await sim.purchase()
                let delivered = try await Self.waitFor(sim, purchase.notificationUUID) { $0["deliveryStatus"] as? String == "delivered" }
                #expect(ContinuousClock.now - started >= .milliseconds(1200))
                #expect(Self.results(delivered) == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE", "UNSUCCESSFUL_HTTP_RESPONSE_CODE", "SUCCESS"])
                let requests = await receiver.requests(to: "/apple")
                #expect(requests.count == 3)
                #expect(requests.allSatisfy { $0.jsonBody()?["signedPayload"]?.string == purchase.signedPayload })

                // The next notification never gets through: a fault fails its attempts without sending them.
                _ = try await sim.post("/sim/faults", ["target": "notifications", "status": 503, "times": 10])
                let lost = try await sim.purchase(productId: "com.example.coins500")
                _ = try await Self.waitFor(sim, lost.notificationUUID) { Self.results($0).count >= 2 }
                #expect(await receiver.requests(to: "/apple").count == 3)

                let auth = TestToken.header(try TestToken.make(key: P256.Signing.PrivateKey()))
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                let window: [String: Any] = ["startDate": now - 3_600_000, "endDate": now + 3_600_000]
                let all = try await sim.post("/inApps/v1/notifications/history", window, headers: auth)
                #expect(all.status == 200)
                let items = try #require(all.body["notificationHistory"] as? [[String: Any]])
                #expect(items.map { $0["signedPayload"] as? String } == [purchase.signedPayload, lost.signedPayload])
                #expect(Self.results(items[0]) == ["UNSUCCESSFUL_HTTP_RESPONSE_CODE", "UNSUCCESSFUL_HTTP_RESPONSE_CODE", "SUCCESS"])
                #expect(all.body["hasMore"] as? Bool == false)

                let failures = try await sim.post(
                    "/inApps/v1/notifications/history", window.merging(["onlyFailures": true]) { $1 }, headers: auth)
                let failed = try #require(failures.body["notificationHistory"] as? [[String: Any]])
                #expect(failed.map { $0["signedPayload"] as? String } == [lost.signedPayload])
                #expect(Self.results(failed[0]).allSatisfy { $0 == "UNSUCCESSFUL_HTTP_RESPONSE_CODE" })

                let byTransaction = try await sim.post(
                    "/inApps/v1/notifications/history", window.merging(["transactionId": lost.transactionId]) { $1 }, headers: auth)
                #expect((byTransaction.body["notificationHistory"] as? [[String: Any]])?.count == 1)
                let missingDates = try await sim.post("/inApps/v1/notifications/history", [String: Any](), headers: auth)
                #expect(missingDates.status == 400)
            }
        }
    }

    @Test func slowReceiverTimesOutAndHistoryPages() async throws {
        try await withStubServer { receiver in
            await receiver.respond(to: "/slow", with: [.json("{}", delay: .seconds(6)), .json("{}")])
            try await SimHarness.with({
                $0.notifyURL = receiver.url("/slow")
                // Well below the receiver's 6 s, and well above what its second, prompt answer takes on a loaded
                // machine (at 1.5 s the whole suite's load made the retry time out too).
                $0.notifyTimeout = .milliseconds(3000)
                $0.retryScale = 36_000
                $0.pageSize = 1
            }) { sim in
                let purchase = try await sim.purchase()
                let delivered = try await Self.waitFor(sim, purchase.notificationUUID) { $0["deliveryStatus"] as? String == "delivered" }
                #expect(Self.results(delivered) == ["TIMED_OUT", "SUCCESS"])

                let auth = TestToken.header(try TestToken.make(key: P256.Signing.PrivateKey()))
                let test = try await sim.post("/inApps/v1/notifications/test", [String: Any](), headers: auth)
                let token = try #require(test.body["testNotificationToken"] as? String)
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                let window: [String: Any] = ["startDate": now - 3_600_000, "endDate": now + 3_600_000]
                let first = try await sim.post("/inApps/v1/notifications/history", window, headers: auth)
                #expect(first.body["hasMore"] as? Bool == true)
                let pageToken = try #require(first.body["paginationToken"] as? String)
                let second = try await sim.post("/inApps/v1/notifications/history?paginationToken=\(pageToken)", window, headers: auth)
                #expect((second.body["notificationHistory"] as? [[String: Any]])?.count == 1)
                #expect(second.body["hasMore"] as? Bool == false)
                let status = try await sim.get("/inApps/v1/notifications/test/\(token)", headers: auth)
                #expect(status.status == 200)
                let verifier = try SignedDataTests.verifier(roots: [try await sim.rootDER()])
                let testPayload = try #require(await verifier.verifyNotification(status.body["signedPayload"] as? String ?? "").value)
                #expect(testPayload.payload.notificationType == .test)
            }
        }
    }
}
