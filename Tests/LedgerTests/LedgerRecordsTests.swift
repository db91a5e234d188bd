import Ledger
import Pipeline
import Testing

@Suite struct LedgerRecordsTests {
    let keys = Keys(prefix: "tg")

    @Test func ledgerKeysShareTheUsersHashTag() {
        let tag = "{u:42}"
        for key in [
            keys.transaction(user: "42", transactionId: "1000"), keys.transactions(user: "42"),
            keys.ledgerMeta(user: "42"), keys.notifications(user: "42"), keys.entitlement(user: "42", name: "vip"),
            keys.account(user: "42"), keys.offerSignatures(user: "42", offerId: "winback50"),
            keys.order(user: "42", orderNo: "ord_1"),
        ] {
            #expect(key.hasPrefix("tg:\(tag):"))
        }
        #expect(keys.binding(originalTransactionId: "7") == "tg:{otx:7}:owner")
        #expect(keys.parked(originalTransactionId: "7") == "tg:{otx:7}:parked")
    }

    @Test func accountKeysMapBackToTheirUser() {
        #expect(keys.user(ofAccountKey: keys.account(user: "alice")) == "alice")
        #expect(keys.user(ofAccountKey: "tg:{u:}:account") == nil)
        #expect(keys.user(ofAccountKey: "tg:{p0}:jobs") == nil)
    }

    @Test func transactionRecordsDecodeTheirHash() throws {
        let record = try #require(
            TransactionRecord(hash: [
                "tid": "2", "otid": "1", "product": "coins100", "type": "consumable", "env": "Sandbox", "state": "refunded",
                "coins": "100", "debited": "30", "shortfall": "70", "purchase": "1767225600000",
            ]))
        #expect(record.coins - record.debited == 70)
        #expect(record.shortfall == 70 && record.originalTransactionId == "1" && record.expiresDate == nil)
        #expect(record.offer == nil && record.offerSigned == nil && !record.withheld)
        let redeemed = try #require(
            TransactionRecord(hash: [
                "tid": "3", "state": "applied", "offer": "winback50", "offer.signed": "0", "withheld": "1",
            ]))
        #expect(redeemed.offer == "winback50" && redeemed.offerSigned == false && redeemed.withheld)
        #expect(TransactionRecord(hash: ["tid": "2"]) == nil)
    }
}
