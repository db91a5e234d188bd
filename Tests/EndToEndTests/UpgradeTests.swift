import AppStore
import Foundation
import HTTPClient
import Pipeline
import TestSupport
import Testing

/// Issue 41 item 5, the upgrade path: a ledger an earlier build wrote (Tests/Fixtures/upgrade, a dump of that build's
/// Redis) is refused by today's services until `tollctl upgrade` ran; then today's services serve it and go on from
/// it. One server (the dumps are of one server); the cluster run skips it.
@Suite(.enabled(if: !SystemRedis.onCluster, "the fixtures are dumps of one redis-server"))
struct UpgradeTests {
    @Test(.logsOnFailure, arguments: UpgradeFixture.names)
    func aLedgerAnEarlierBuildWroteIsServedAfterTollctlUpgrade(name: String) async throws {
        let fixture = try UpgradeFixture(name)
        let manifest = fixture.manifest
        let server = try await RedisServer.start(loading: fixture.dump)
        let environment = ["TOLLGATE_REDIS_URL": server.url, "TOLLGATE_KEY_PREFIX": "tg", "LOG_LEVEL": "warning"]
        do {
            // Today's fulfiller refuses the older data, naming the command.
            let catalog = FileManager.default.temporaryDirectory.appendingPathComponent("tollgate-upgrade-\(UUID().uuidString).json")
            try Data(SystemHarness.catalogJSON.utf8).write(to: catalog)
            defer { try? FileManager.default.removeItem(at: catalog) }
            let refused = try await ChildProcess.run(
                "fulfiller", arguments: [],
                environment: environment.merging(["TOLLGATE_CATALOG": catalog.path, "TOLLGATE_METRICS_HOST": "127.0.0.1"]) { $1 })
            #expect(refused.status != 0, "\(refused.output)")
            #expect(refused.output.contains("data_upgrade_required") && refused.output.contains("tollctl upgrade"), "\(refused.output)")

            let upgraded = try await ChildProcess.run("tollctl", arguments: ["upgrade"], environment: environment)
            #expect(upgraded.status == 0 && upgraded.output.contains("data version 0 -> \(StoredData.version)"), "\(upgraded.output)")
            let again = try await ChildProcess.run("tollctl", arguments: ["upgrade"], environment: environment)
            #expect(again.status == 0 && again.output.contains("nothing to do"), "\(again.output)")
        } catch {
            await server.shutdown()
            throw error
        }

        try await SystemHarness.with(.init(replicas: 1), redis: .server(server)) { system in
            let ingest = system.ingestClient
            // The old users as the earlier build served them, through today's customer API.
            for (user, held) in manifest.users {
                let info = try await ingest.send(.get, "/v1/users/\(user)", auth: .service)
                #expect(info.status == 200 && info.json["coins"] as? Int == held.coins, "\(user): \(info.text)")
                let entitlements = info.json["entitlements"] as? [[String: Any]] ?? []
                for (name, entitlement) in held.entitlements {
                    let shown = entitlements.first { $0["entitlement"] as? String == name }
                    #expect(shown?["state"] as? String == entitlement.state, "\(user) \(name): \(info.text)")
                }
                let transactions = info.json["transactions"] as? [[String: Any]] ?? []
                #expect(Set(transactions.compactMap { $0["transactionId"] as? String }) == Set(held.transactions), "\(info.text)")
                for tid in held.transactions {
                    let owner = try await ingest.send(.get, "/v1/transactions/\(tid)", auth: .service)
                    #expect(owner.status == 200 && owner.json["userId"] as? String == user, "\(tid): \(owner.text)")
                }
            }
            let refunded = try await ingest.send(.get, "/v1/transactions/\(manifest.refunded.transactionId)", auth: .service)
            let refund = (refunded.json["transaction"] as? [String: Any])?["refund"] as? [String: Any]
            #expect(refund?["debited"] as? Int == 100, "\(refunded.text)")

            // A new purchase credits on top of the old balance, and Apple's refund of it takes exactly it back.
            let user = manifest.refunded.user
            let before = try #require(manifest.users[user]).coins
            let purchase = try await system.simClient.purchase("com.example.coins100", type: "Consumable")
            let bought = try await ingest.submitTransaction(user: user, signedTransaction: purchase.signedTransaction)
            #expect(bought.status == "fulfilled", "\(bought)")
            try await system.awaitCoins(user, Int64(before + 100))
            _ = try await system.simClient.event("REFUND", transactionId: purchase.transactionId)
            try await system.awaitCoins(user, Int64(before))
            // The old subscriber's entitlement still stands beside a new non-consumable.
            let subscriber = manifest.subscription.user
            let noads = try await system.simClient.purchase("com.example.noads", type: "Non-Consumable")
            #expect(try await ingest.submitTransaction(user: subscriber, signedTransaction: noads.signedTransaction).status == "fulfilled")
            try await system.awaitEntitlement(subscriber, "no_ads", "active")
            try await system.awaitEntitlement(subscriber, "vip", "active")
            try await system.expectQuietAndConsistent()
        }
    }
}
