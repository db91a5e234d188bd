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
}
