import Core
import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// Issue 31 item 7: `tollctl user` and `tollctl lookup --transaction/--original/--token` show what the customer API
/// shows, with `--json` its very JSON, on a ledger the real ledger functions wrote (16 partitions).
@Suite struct CustomerCommandsTests {
    @Test func userAndLookUpsShowTheCustomerAPIsAnswers() async throws {
        try await withRedisServer { server in
            let environment = ["TOLLGATE_REDIS_URL": server.url, "TOLLGATE_PARTITIONS": "16"]
            let order = try await LedgerHarness.on(server, partitions: 16) { h in
                let order = try await Fixture.order(h, user: "alice", product: "coins100")
                var pack = Fixture.transaction("c1", product: "coins100", token: order.appAccountToken)
                (pack.price, pack.currency) = (990, "EUR")
                _ = try await h.deliver(Fixture.client("alice", [pack], order: order.orderNo))
                _ = try await h.deliver(Fixture.client("alice", [Fixture.transaction("n1", product: "noads")]))
                return order
            }
            func tollctl(_ arguments: [String]) async throws -> (status: Int32, output: String) {
                let result = try await ChildProcess.run("tollctl", arguments: arguments, environment: environment)
                return (result.status, result.output)
            }
            let json = try await tollctl(["user", "alice", "--json"])
            #expect(json.status == 0, "\(json.output)")
            let info = try JSONReader.parse(Array(json.output.utf8))
            #expect(info["coins"]?.int == 100 && info["transactionsTotal"]?.int == 2)
            #expect(info["entitlements"]?.array?.first?["entitlement"]?.string == "no_ads")

            let text = try await tollctl(["user", "alice"])
            #expect(text.output.contains("transactions 2") && text.output.contains("price=990 EUR"), "\(text.output)")

            let transaction = try await tollctl(["lookup", "--transaction", "c1", "--json"])
            let found = try JSONReader.parse(Array(transaction.output.utf8))
            #expect(found["userId"]?.string == "alice" && found["transaction"]?["currency"]?.string == "EUR")
            let chain = try await tollctl(["lookup", "--original", "n1"])
            #expect(chain.status == 0 && chain.output.contains("owner alice") && chain.output.contains("n1"), "\(chain.output)")
            let token = try await tollctl(["lookup", "--token", order.appAccountToken, "--json"])
            let byToken = try JSONReader.parse(Array(token.output.utf8))
            #expect(byToken["orderNo"]?.string == order.orderNo)
            #expect(byToken["transactions"]?.array?.compactMap { $0["transactionId"]?.string } == ["c1"])

            let unknown = try await tollctl(["lookup", "--transaction", "nothing"])
            #expect(unknown.status == 1 && unknown.output.contains("not_found"))
            let two = try await tollctl(["lookup", "--transaction", "c1", "--original", "c1"])
            #expect(two.status != 0)

            // Records from before the owner index: the index is gone, the look-up finds nothing until the backfill.
            let keys = Keys(prefix: "tg", layout: try PartitionLayout(count: 16))
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            let index = keys.transactionOwner(partition: keys.partition(ofUser: "alice"), transactionId: "c1")
            _ = try await redis.send("DEL", index)
            #expect(try await tollctl(["lookup", "--transaction", "c1"]).status == 1)
            let dry = try await tollctl(["index-transactions", "--dry-run"])
            #expect(dry.output.contains("users=1 transactions=2 missing=1"), "\(dry.output)")
            let written = try await tollctl(["index-transactions"])
            #expect(written.output.contains("written=1"), "\(written.output)")
            #expect(try await redis.send("GET", index).string == "alice")
            #expect(try await tollctl(["lookup", "--transaction", "c1"]).output.contains("owner alice"))
            #expect(try await tollctl(["index-transactions"]).output.contains("written=0"), "a second run writes nothing")
        }
    }
}
