import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification

@Suite struct LedgerViewTests {
    @Test func consumedShareIsThePartOfTheCreditedCoinsNoLongerInTheBalanceRoundedDown() {
        func share(type: String = "consumable", coins: String = "300", balance: Int64) -> Int? {
            LedgerView(owner: "u", record: ["type": type, "coins": coins], balance: balance).consumedShare
        }
        #expect(share(balance: 300) == 0)
        #expect(share(balance: 5000) == 0)  // coins from other purchases do not make this one unused
        #expect(share(balance: 200) == 33_333)  // 100 of 300 gone: 33.333 %
        #expect(share(balance: 0) == 100_000)
        #expect(share(balance: -50) == 100_000)
        #expect(share(coins: "0", balance: 0) == nil)  // Family Sharing: nothing credited
        #expect(share(type: "nonConsumable", balance: 0) == nil)
        #expect(LedgerView(owner: nil).consumedShare == nil)
        #expect(!LedgerView(owner: "u").delivered && !LedgerView(owner: "u").consented)
    }

    /// Spent coins are consumed (issue 31 item 4): the share read from the real ledger after spends through
    /// ``CoinSpend``, with granted coins (`coins.granted`, set directly) never counted as remaining.
    @Test func theShareCountsSpentCoinsAndNeverGrantedOnes() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("c1", product: "coins100")]))
            func share() async throws -> Int? {
                try await LedgerView.read(on: h.redis, keys: h.keys, transactionId: "c1", originalTransactionId: "c1").consumedShare
            }
            func spend(_ amount: Int64, _ key: String) async throws {
                let outcome = try await CoinSpend(user: "alice", amount: amount, reason: "test", idempotencyKey: key, by: "shop")
                    .run(on: h.redis, keys: h.keys, now: testNow).outcome
                guard case .spent = outcome else { throw LedgerError.unexpectedReply("spend refused: \(outcome)") }
            }
            #expect(try await share() == 0)
            try await spend(40, "s1")
            #expect(try await share() == 40_000)
            // 60 granted coins join the 60 purchased ones: the balance is 120, yet 40 % of the purchase stays consumed.
            let account = h.keys.account(user: "alice")
            _ = try await h.redis.send(RedisCommand("HINCRBY", account, "coins", 60))
            _ = try await h.redis.send(RedisCommand("HSET", account, CoinSpend.Field.granted, "60"))
            #expect(try await share() == 40_000)
            // Spends draw purchased coins first: 70 more leave 50 granted coins and none purchased.
            try await spend(70, "s2")
            #expect(try await h.hash(account)[CoinSpend.Field.granted] == "50")
            #expect(try await share() == 100_000)
        }
    }
}
