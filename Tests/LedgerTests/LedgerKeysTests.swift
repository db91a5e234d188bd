import Ledger
import Pipeline
import Redis
import Testing

/// The ledger's keys (accounts, chain bindings) in the partition layout: a user's and a chain's keys share their
/// partition's tag, and an account key names its user only in that user's own partition.
@Suite struct LedgerKeysTests {
    @Test func usersAndChainsKeepTheirNamesWithOnePartitionAndTheirPartitionsTagWithMore() throws {
        let one = Keys()
        #expect(one.userTag("42") == "{u:42}" && one.chainTag("1000") == "{otx:1000}")
        #expect(one.user(ofAccountKey: "tg:{u:42}:account") == "42")
        let keys = Keys(prefix: "tg", layout: try PartitionLayout(count: 16))
        let partition = Partition(Int(ClusterKeySlot.crc16("42".utf8)) % 16)
        #expect(keys.partition(ofUser: "42") == partition)
        #expect(keys.userTag("42") == "\(keys.tag(partition: partition)):u:42")
        let account = "tg:\(keys.userTag("a:b}c")):account"
        #expect(keys.user(ofAccountKey: account) == "a:b}c")
        #expect(
            keys.user(ofAccountKey: "tg:{p3}:u:42:account") == (keys.partition(ofUser: "42") == 3 ? "42" : nil),
            "a user in the wrong partition's tag is not theirs")
        #expect(keys.user(ofAccountKey: "tg:{u:42}:account") == nil)
        #expect(ClusterKeySlot.slot(keys.account(user: "42")) == ClusterKeySlot.slot(keys.tag(partition: partition)))
        #expect(
            ClusterKeySlot.slot(keys.binding(originalTransactionId: "1000"))
                == ClusterKeySlot.slot(keys.verified(partition: keys.partition(ofOriginalTransaction: "1000")).stream))
    }
}
