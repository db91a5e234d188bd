import AppStore
import Foundation
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification

/// What one receipt can make Tollgate ask Apple (issue 29 item 3), against a real redis-server and the real
/// `appstore-sim` paging its history one transaction at a time (`SIM_PAGE_SIZE=1`): every page of Get Transaction
/// History is its own call, taking its own token; a receipt reads at most `TOLLGATE_RECEIPT_MAX_HISTORY_PAGES`; a
/// user's calls are bounded per hour; a receipt posted again within `TOLLGATE_RECEIPT_MEMORY` asks Apple nothing.
@Suite(.serialized)
struct ReceiptBoundsTests {
    /// A receipt naming `count` consumables of one customer: `count` pages of history at page size 1.
    static func receipt(_ harness: VerifierHarness, count: Int) async throws -> String {
        var receipt: String?
        for _ in 0..<count {
            var body: [String: Any] = [:]
            if let receipt { body["receipt"] = receipt }
            receipt = try #require(try await harness.sim.purchase(body)["receipt"] as? String)
        }
        return try #require(receipt)
    }

    static func settings(_ harness: VerifierHarness, _ extra: [String: String]) throws -> [String: String] {
        try VerifierServerAPIReceiptTests.withoutVerifyReceipt(harness).merging(extra) { $1 }
    }

    /// Tokens left in a token bucket (the ratelimit library's hash), or nil before its first use.
    static func tokens(_ harness: VerifierHarness, _ key: String) async throws -> Double? {
        try await harness.redis.send("HGET", key, "tokens").string.flatMap(Double.init)
    }

    @Test func everyPageOfAHistoryIsACallWithItsOwnToken() async throws {
        try await VerifierHarness.with(simEnvironment: ["SIM_PAGE_SIZE": "1"]) { harness in
            let receipt = try await Self.receipt(harness, count: 5)
            try await harness.withVerifier(try Self.settings(harness, ["TOLLGATE_USER_APPLE_CALLS": "1000"])) { _ in
                let job = try await harness.enqueue(kind: .receipt, payload: receipt, user: "alice")
                #expect(try await harness.waitForEvents(1).first?.jobId == job)
            }
            let calls = try await harness.sim.requestCount("api.production")
            #expect(calls == 5, "five pages of history")
            let left = try #require(try await Self.tokens(harness, UserAppleBudget.key(harness.keys, user: "alice")))
            // The bucket refills 1000 per hour (0.28/s) while the job runs: each call took one token.
            #expect(left <= 1000 - Double(calls) + 1 && left >= 1000 - Double(calls), "tokens left \(left) after \(calls) calls")
        }
    }

    @Test func aHistoryLongerThanTheReceiptsPageBudgetIsRejectedAtTheBudget() async throws {
        try await VerifierHarness.with(simEnvironment: ["SIM_PAGE_SIZE": "1"]) { harness in
            let receipt = try await Self.receipt(harness, count: 5)
            try await harness.withVerifier(try Self.settings(harness, ["TOLLGATE_RECEIPT_MAX_HISTORY_PAGES": "2"])) { _ in
                let job = try await harness.enqueue(kind: .receipt, payload: receipt, user: "alice")
                let status = try await harness.waitForStatus(job) { $0["state"] == "rejected" }
                #expect(status["reason"] == "receipt_history_too_long", "\(status)")
            }
            #expect(try await harness.sim.requestCount("api.production") == 2)
            #expect(try await harness.events().isEmpty)
        }
    }

    @Test func aUsersCallsToAppleAreBoundedPerHour() async throws {
        try await VerifierHarness.with(simEnvironment: ["SIM_PAGE_SIZE": "1"]) { harness in
            let receipt = try await Self.receipt(harness, count: 5)
            let settings = try Self.settings(
                harness, ["TOLLGATE_USER_APPLE_CALLS": "3", "TOLLGATE_RETRY_BASE_MS": "60000", "TOLLGATE_RETRY_CAP_MS": "60000"])
            try await harness.withVerifier(settings) { _ in
                let job = try await harness.enqueue(kind: .receipt, payload: receipt, user: "mallory")
                let status = try await harness.waitForStatus(job) { $0["state"] == "retrying" }
                #expect(status["reason"] == "user_apple_budget_spent", "\(status)")
                // Another user's receipt is not held back by mallory's budget.
                let other = try await Self.receipt(harness, count: 1)
                let before = try await harness.sim.requestCount("api.production")
                let job2 = try await harness.enqueue(kind: .receipt, payload: other, user: "alice")
                #expect(try await harness.waitForEvents(1).first?.jobId == job2)
                #expect(try await harness.sim.requestCount("api.production") > before)
            }
            #expect(try await harness.events().count == 1)
        }
    }

    @Test func aReceiptPostedAgainWithinTheMemoryAsksAppleNothing() async throws {
        try await VerifierHarness.with(simEnvironment: ["SIM_PAGE_SIZE": "1"]) { harness in
            let receipt = try await Self.receipt(harness, count: 3)
            try await harness.withVerifier(try Self.settings(harness, [:])) { _ in
                let first = try await harness.enqueue(kind: .receipt, payload: receipt, user: "alice", order: "order-1")
                #expect(try await harness.waitForEvents(1).first?.jobId == first)
                let calls = try await harness.sim.requestCount("api.production")
                #expect(calls == 3)
                // The same receipt with other orders (a new job each at ingest, which normalized its spelling).
                for index in 0..<2 {
                    try await harness.enqueue(kind: .receipt, payload: receipt, user: "alice", order: "order-\(index + 2)")
                    _ = try await harness.waitForEvents(index + 2)
                }
                #expect(try await harness.sim.requestCount("api.production") == calls, "Apple was asked again")
                let events = try await harness.waitForEvents(3)
                #expect(Set(events.map { $0.transactions.map(\.transactionId) }).count == 1, "the same purchases each time")
                // Another user posting the same receipt is validated for themselves (the ledger refuses them later).
                try await harness.enqueue(kind: .receipt, payload: receipt, user: "bob")
                _ = try await harness.waitForEvents(4)
                #expect(try await harness.sim.requestCount("api.production") == calls * 2)
            }
        }
    }
}
