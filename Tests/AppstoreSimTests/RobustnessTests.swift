import AppStore
import Foundation
import HTTPClient
import Testing

@testable import appstore_sim

@Suite("robustness")
struct RobustnessTests {
    /// Random and hostile bodies on every POST endpoint: each answers with a status below 500, and the
    /// simulator keeps serving.
    @Test func hostileBodiesNeverBreakTheSimulator() async throws {
        try await SimHarness.with { sim in
            let purchase = try await sim.purchase()
            let paths = ["/sim/purchases", "/sim/events", "/sim/faults", "/verifyReceipt", "/sandbox/verifyReceipt"]
            var bodies: [Data] = [
                Data(), Data("null".utf8), Data("[]".utf8), Data("\"x\"".utf8), Data("{\"type\":{}}".utf8),
                Data("{\"productId\":\"\(String(repeating: "x", count: 5000))\",\"type\":\"Consumable\"}".utf8),
                Data("{\"productId\":\"x\",\"type\":\"Consumable\",\"quantity\":1e300}".utf8),
                Data("{\"type\":\"REFUND\",\"transactionId\":\"\(purchase.transactionId)\",\"revocationReason\":-5}".utf8),
                Data("{\"receipt-data\":12}".utf8), Data("{\"receipt-data\":\"\(purchase.receipt)\",\"password\":[]}".utf8),
                Data("{\"target\":\"api\",\"status\":429,\"times\":-1}".utf8),
            ]
            for _ in 0..<20 { bodies.append(Data((0..<Int.random(in: 1...200)).map { _ in UInt8.random(in: 0...255) })) }
            for path in paths {
                for body in bodies {
                    let response = try await sim.send(.post, path, body: body)
                    #expect(response.status < 500, "\(path)")
                }
            }
            #expect(try await sim.send(.get, "/sim/health").status == 200)
            #expect(try await sim.post("/verifyReceipt", ["receipt-data": purchase.receipt]).body["status"] as? Int == 0)
        }
    }
}
