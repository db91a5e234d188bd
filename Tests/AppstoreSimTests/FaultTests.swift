import AppStore
@preconcurrency import Crypto
import Foundation
import HTTPClient
import Testing

@testable import appstore_sim

@Suite("faults and control input")
struct FaultTests {
    @Test func twoAppleStatusFaultsThenNormalAnswers() async throws {
        try await SimHarness.with { sim in
            let purchase = try await sim.purchase()
            let created = try await sim.post("/sim/faults", ["target": "verifyReceipt", "status": 21005, "times": 2])
            #expect(created.status == 201)
            var statuses: [Int] = []
            for _ in 0..<3 {
                statuses.append(try await sim.post("/verifyReceipt", ["receipt-data": purchase.receipt]).body["status"] as? Int ?? -1)
            }
            #expect(statuses == [21005, 21005, 0])
            let (_, state) = try await sim.get("/sim/faults")
            let fault = try #require((state["faults"] as? [[String: Any]])?.first)
            #expect(fault["served"] as? Int == 2)
            #expect(fault["remaining"] as? Int == 0)
        }
    }

    @Test func httpErrorsRateLimitsAndDelays() async throws {
        try await SimHarness.with { sim in
            let purchase = try await sim.purchase()
            let client = ReceiptClient(
                configuration: ReceiptClientConfiguration(
                    bundleId: "com.example.app", productionURL: sim.url("/verifyReceipt"),
                    sandboxURL: sim.url("/sandbox/verifyReceipt"), timeout: .seconds(2)))

            _ = try await sim.post("/sim/faults", ["target": "verifyReceipt", "status": 503, "times": 1])
            let unavailable = await client.verify(purchase.receipt)
            guard case .retryable(let failure) = unavailable.result else {
                Issue.record("503 must be retryable")
                return
            }
            #expect(failure.code == .appleUnavailable)

            _ = try await sim.post("/sim/faults", ["target": "verifyReceipt", "status": 429, "times": 1, "retryAfter": 7])
            let raw = try await sim.send(.post, "/verifyReceipt", json: ["receipt-data": purchase.receipt])
            #expect(raw.status == 429)
            #expect(raw.header("Retry-After") == "7")

            _ = try await sim.post("/sim/faults", ["target": "verifyReceipt", "delayMs": 4000])
            let slow = await client.verify(purchase.receipt)
            #expect(slow.result.failure?.code == .appleTimeout)
            #expect(try await sim.delete("/sim/faults") == 204)
            #expect(await client.verify(purchase.receipt).result.value != nil)

            let auth = TestToken.header(try TestToken.make(key: P256.Signing.PrivateKey()))
            _ = try await sim.post("/sim/faults", ["target": "api", "status": 429, "times": 1, "retryAfter": 3])
            let limited = try await sim.send(.get, "/inApps/v1/transactions/\(purchase.transactionId)", headers: auth)
            #expect(limited.status == 429)
            #expect(limited.header("Retry-After") == "3")
            #expect(try await sim.get("/inApps/v1/transactions/\(purchase.transactionId)", headers: auth).status == 200)

            _ = try await sim.post("/sim/faults", ["target": "verifyReceipt", "status": 21005, "environment": "Sandbox"])
            #expect(try await sim.post("/verifyReceipt", ["receipt-data": purchase.receipt]).body["status"] as? Int == 0)
        }
    }

    @Test func badControlInputIsRefusedWithStableCodes() async throws {
        try await SimHarness.with { sim in
            let purchase = try await sim.purchase()
            let cases: [(String, Any, Int, String)] = [
                ("/sim/purchases", ["productId": "x"], 400, "invalid_json"),
                ("/sim/purchases", ["productId": "x", "type": "Gift"], 400, "invalid_request"),
                ("/sim/purchases", ["productId": "x", "type": "Consumable", "quantity": 0], 400, "invalid_request"),
                ("/sim/purchases", ["productId": "x", "type": "Consumable", "environment": "Xcode"], 400, "invalid_request"),
                ("/sim/purchases", ["productId": "x", "type": "Consumable", "appAccountToken": "nope"], 400, "invalid_request"),
                ("/sim/purchases", ["productId": "x", "type": "Consumable", "expiresInSeconds": 60], 400, "invalid_request"),
                ("/sim/purchases", ["productId": "x", "type": "Consumable", "receipt": "AAAA"], 404, "receipt_not_found"),
                ("/sim/events", ["type": "DID_RENEW", "transactionId": purchase.transactionId], 400, "not_a_subscription"),
                ("/sim/events", ["type": "REFUND", "transactionId": "42"], 404, "transaction_not_found"),
                ("/sim/events", ["type": "TELEPORT", "transactionId": purchase.transactionId], 400, "invalid_request"),
                ("/sim/events", ["type": "REFUND", "subtype": "UPGRADE", "transactionId": purchase.transactionId], 400, "invalid_request"),
                ("/sim/events", ["type": "REFUND_REVERSED", "transactionId": purchase.transactionId], 409, "invalid_state"),
                ("/sim/faults", ["target": "dns"], 400, "invalid_request"),
                ("/sim/faults", ["target": "api", "status": 21005], 400, "invalid_request"),
                ("/sim/faults", ["target": "verifyReceipt", "status": 503, "rate": 2], 400, "invalid_request"),
                ("/sim/faults", ["target": "verifyReceipt"], 400, "invalid_request"),
                ("/sim/faults", [1, 2, 3], 400, "invalid_json"),
                ("/sim/faults", ["target": "verifyReceipt", "status": 503, "errorCode": 4_040_006], 400, "invalid_request"),
                ("/sim/faults", ["target": "api", "status": 404, "errorCode": 12], 400, "invalid_request"),
                ("/sim/notifications/rescind-consent", ["environment": "Xcode"], 400, "invalid_request"),
                ("/sim/notifications/rescind-consent", ["bundleId": ""], 400, "invalid_request"),
            ]
            for (path, body, status, code) in cases {
                let (answered, json) = try await sim.post(path, body)
                #expect(answered == status, "\(path) \(body)")
                #expect((json["error"] as? [String: Any])?["code"] as? String == code, "\(path) \(body)")
                #expect((json["error"] as? [String: Any])?["message"] is String)
            }
            let notJSON = try await sim.send(.post, "/sim/events", body: Data([0xff, 0x00, 0x7b]))
            #expect(notJSON.status == 400)
            #expect(try await sim.send(.get, "/sim/health").status == 200)
        }
    }
}
