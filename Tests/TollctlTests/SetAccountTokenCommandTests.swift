import Core
import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// `tollctl apple set-account-token`: the real binary against the real simulator and a real redis-server. The user's own
/// token is set at Apple and maps back to the user the way the fulfiller resolves owners; a purchase the ledger gives
/// to someone else, or whose token maps to someone else, is refused with nothing changed at Apple or in Redis; a
/// renewal's transaction ID is refused; Apple's refusals end with their stable codes.
@Suite(.serialized)
struct SetAccountTokenCommandTests {
    private func subscribe(_ harness: StoreHarness, _ extra: [String: Any] = [:]) async throws -> String {
        var body: [String: Any] = [
            "productId": "com.example.vip.month", "type": "Auto-Renewable Subscription", "expiresInSeconds": 3600,
        ]
        body.merge(extra) { _, new in new }
        return try #require(try await harness.sim.purchase(body)["transactionId"] as? String)
    }

    private func setToken(_ harness: StoreHarness, _ arguments: [String], extra: [String: String] = [:]) async throws
        -> (status: Int32, output: String)
    {
        try await ChildProcess.run(
            "tollctl", arguments: ["apple", "set-account-token"] + arguments,
            environment: harness.environment(try harness.apiSettings().merging(extra) { _, new in new }))
    }

    /// The JSON claims of a JWS (the signature is the simulator's; its verification is tested elsewhere).
    private func claims(_ jws: String) throws -> JSONValue {
        let parts = jws.split(separator: ".")
        try #require(parts.count == 3)
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        let data = try #require(Data(base64Encoded: base64))
        return try #require(JSONValue.read(data))
    }

    /// The appAccountToken Apple signs on the purchase's next transaction: a renewal (with `notify`, its notification
    /// too), else a silent refund-declined look at it.
    private func tokenAtApple(_ harness: StoreHarness, _ id: String, renew: Bool = false) async throws -> (String?, String?) {
        let event = try await harness.sim.post(
            "/sim/events", ["type": renew ? "DID_RENEW" : "REFUND_DECLINED", "transactionId": id, "notify": renew])
        let transaction = try claims(try #require(event["signedTransaction"] as? String))
        var notified: String?
        if renew, let payload = event["signedPayload"] as? String {
            let data = try #require(try claims(payload)["data"])
            notified = try claims(try #require(data["signedTransactionInfo"]?.string))["appAccountToken"]?.string
        }
        return (transaction["appAccountToken"]?.string, notified)
    }

    private func line(_ output: String, _ prefix: String) -> String? {
        output.split(separator: "\n").first { $0.hasPrefix(prefix) }.map(String.init)
    }

    @Test func theUsersOwnTokenIsSetAtAppleAndMapsBackToTheUser() async throws {
        try await StoreHarness.with { harness in
            let original = try await subscribe(harness)
            let run = try await setToken(harness, [original, "--user", "bob"])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("environment Production"))
            #expect(run.output.contains("purchase \(original) product com.example.vip.month"))
            #expect(run.output.contains("ledger bound to no one yet"))
            #expect(run.output.contains("the ledger had nothing of user bob before"), "\(run.output)")
            let changed = try #require(line(run.output, "changed appAccountToken none -> "), "\(run.output)")
            #expect(changed.hasSuffix("(user bob's own token, created now)"))
            let token = try #require(await harness.redis.send("GET", harness.keys.accountToken(user: "bob")).string)
            #expect(changed.contains("-> \(token) "))
            #expect(UUID(uuidString: token) != nil && token == token.lowercased())

            // Then the ledger binds it: Apple's transaction, carrying the token and no user, is on the verified stream.
            let handed = try #require(line(run.output, "handed Apple's transaction to the ledger as job "), "\(run.output)")
            let handedEvent = try #require(try await harness.events().last)
            #expect(handed.contains(handedEvent.jobId))
            #expect(handedEvent.userId == nil)
            #expect(handedEvent.kind == .transaction)
            #expect(handedEvent.transactions.map(\.originalTransactionId) == [original])
            #expect(handedEvent.transactions.first?.appAccountToken == token)

            // The mapping the fulfiller reads: the user, no order, never expiring.
            let mapping = harness.keys.appAccountToken(token)
            #expect(try await harness.redis.hgetall(mapping) == [Order.TokenField.user: "bob"])
            #expect(try await harness.redis.send("PTTL", mapping).int == -1)
            #expect(try await harness.redis.send("PTTL", harness.keys.accountToken(user: "bob")).int == -1)

            // Apple signs the renewal and its notification with the token, and the ledger resolves them to bob.
            let (renewed, notified) = try await tokenAtApple(harness, original, renew: true)
            #expect(renewed == token)
            #expect(notified == token)
            let applier = LedgerApplier(
                redis: harness.redis, catalog: try Catalog(products: []), keys: harness.keys, group: "fulfillers",
                clampRefunds: false, now: { 0 })
            let event = PurchaseEvent(
                jobId: "job-1", kind: .notificationV2, source: .apple, environment: "Production", verifiedAt: 0,
                transactions: [
                    PurchaseEventTransaction(
                        transactionId: "2999999999999998", originalTransactionId: original, productId: "com.example.vip.month",
                        purchaseDate: 0, appAccountToken: try #require(renewed))
                ])
            #expect(try await applier.resolveOwner(event) == .token(user: "bob", orderNo: nil, token: token))

            // Again: nothing to change. Another purchase of bob's: the same token, not a new one.
            let again = try await setToken(harness, [original, "--user", "bob"])
            #expect(again.status == 0, "\(again.output)")
            #expect(again.output.contains("unchanged appAccountToken \(token) already maps to user bob"), "\(again.output)")
            #expect(!again.output.contains("changed appAccountToken none"))
            let second = try await subscribe(harness)
            let reused = try await setToken(harness, [second, "--user", "bob"])
            #expect(reused.status == 0, "\(reused.output)")
            #expect(reused.output.contains("changed appAccountToken none -> \(token) (user bob's own token, existing)"), "\(reused.output)")
            #expect(!reused.output.contains("the ledger had nothing of user bob"))
            #expect(try await tokenAtApple(harness, second).0 == token)
        }
    }

    @Test func aPurchaseOfAnotherUserIsRefusedAndNothingChanges() async throws {
        try await StoreHarness.with { harness in
            // Bound to alice in the ledger.
            let alices = try await subscribe(harness)
            _ = try await harness.redis.send("SET", harness.keys.binding(originalTransactionId: alices), "alice")
            let calls = try await harness.sim.requestCount("api.production")
            let refused = try await setToken(harness, [alices, "--user", "bob"])
            #expect(refused.status == 1, "\(refused.output)")
            #expect(refused.output.contains("tollctl: error: owned_by_another_user: "), "\(refused.output)")
            #expect(refused.output.contains("user alice, not bob; nothing was changed"), "\(refused.output)")
            #expect(!refused.output.contains("changed appAccountToken"))
            // Apple was only asked about the transaction (Get Transaction Info), never asked to change it.
            #expect(try await harness.sim.requestCount("api.production") == calls + 1)
            #expect(try await tokenAtApple(harness, alices).0 == nil)
            #expect(try await harness.redis.send("EXISTS", harness.keys.accountToken(user: "bob")).int == 0)
            #expect(try await harness.redis.send("GET", harness.keys.binding(originalTransactionId: alices)).string == "alice")

            // Not bound yet, but bought with alice's order's token: still alice's.
            let orderToken = UUID().uuidString.lowercased()
            _ = try await harness.redis.send(
                "HSET", harness.keys.appAccountToken(orderToken), Order.TokenField.user, "alice", Order.TokenField.orderNo, "ord_1")
            let ordered = try await subscribe(harness, ["appAccountToken": orderToken])
            let tokenRefused = try await setToken(harness, [ordered, "--user", "bob"])
            #expect(tokenRefused.status == 1, "\(tokenRefused.output)")
            #expect(tokenRefused.output.contains("owned_by_another_user"), "\(tokenRefused.output)")
            #expect(tokenRefused.output.contains("maps to user alice (order ord_1), not bob"), "\(tokenRefused.output)")
            #expect(try await tokenAtApple(harness, ordered).0 == orderToken)
            #expect(try await harness.redis.send("EXISTS", harness.keys.accountToken(user: "bob")).int == 0)
            // Nothing was handed to the ledger for the refused purchases.
            #expect(try await harness.events().isEmpty)

            // Bound to alice but carrying bob's token (set before the binding appeared): bob is still refused, and
            // alice's own token replaces bob's.
            let bobsToken = try await AccountToken.getOrCreate(user: "bob", keys: harness.keys, on: harness.redis).token
            let stale = try await subscribe(harness, ["appAccountToken": bobsToken])
            _ = try await harness.redis.send("SET", harness.keys.binding(originalTransactionId: stale), "alice")
            let bobAgain = try await setToken(harness, [stale, "--user", "bob"])
            #expect(bobAgain.status == 1, "\(bobAgain.output)")
            #expect(bobAgain.output.contains("owned_by_another_user"), "\(bobAgain.output)")
            #expect(try await tokenAtApple(harness, stale).0 == bobsToken)
            let repaired = try await setToken(harness, [stale, "--user", "alice"])
            #expect(repaired.status == 0, "\(repaired.output)")
            #expect(repaired.output.contains("changed appAccountToken \(bobsToken) -> "), "\(repaired.output)")
            let alicesToken = try #require(await harness.redis.send("GET", harness.keys.accountToken(user: "alice")).string)
            #expect(try await tokenAtApple(harness, stale).0 == alicesToken)

            // The owner herself may: her purchase gets her own token.
            let hers = try await setToken(harness, [alices, "--user", "alice"])
            #expect(hers.status == 0, "\(hers.output)")
            #expect(hers.output.contains("ledger bound to alice"))
            #expect(hers.output.contains("changed appAccountToken none -> \(alicesToken) (user alice's own token, existing)"))
            #expect(try await tokenAtApple(harness, alices).0 == alicesToken)
            // Already bound to her: nothing to hand over.
            #expect(!hers.output.contains("handed Apple's transaction"), "\(hers.output)")
            #expect(try await harness.events().isEmpty)
        }
    }

    @Test func aRenewalsTransactionIdIsRefused() async throws {
        try await StoreHarness.with { harness in
            let original = try await subscribe(harness)
            let renewal = try #require(
                try await harness.sim.post("/sim/events", ["type": "DID_RENEW", "transactionId": original, "notify": false])[
                    "transactionId"] as? String)
            #expect(renewal != original)
            let run = try await setToken(harness, [renewal, "--user", "bob"])
            #expect(run.status == 1, "\(run.output)")
            #expect(
                run.output.contains("tollctl: error: not_original_transaction_id: \(renewal) is not an original transaction ID"),
                "\(run.output)")
            #expect(run.output.contains("original transaction is \(original)"))
            #expect(try await tokenAtApple(harness, original).0 == nil)
            #expect(try await harness.redis.send("EXISTS", harness.keys.accountToken(user: "bob")).int == 0)
        }
    }

    @Test func applesRefusalsAndBadArgumentsEndWithStableCodes() async throws {
        try await StoreHarness.with { harness in
            let family = try #require(
                try await harness.sim.purchase(["inAppOwnershipType": "FAMILY_SHARED"])["transactionId"] as? String)
            let shared = try await setToken(harness, [family, "--user", "bob"])
            #expect(shared.status == 1, "\(shared.output)")
            #expect(shared.output.contains("tollctl: error: api_family_transaction_not_supported: "), "\(shared.output)")
            #expect(shared.output.contains("4000185"))
            #expect(try await tokenAtApple(harness, family).0 == nil)

            let unknown = try await setToken(harness, ["2999999999999999", "--user", "bob"])
            #expect(unknown.status == 1, "\(unknown.output)")
            #expect(unknown.output.contains("tollctl: error: api_not_found: "), "\(unknown.output)")
            #expect(unknown.output.contains("4040010"))

            // A sandbox purchase: production does not know it, sandbox does; an environment the deployment does not
            // accept is refused.
            let sandbox = try await subscribe(harness, ["environment": "Sandbox"])
            let accepting = ["TOLLGATE_ACCEPT_SANDBOX": "true"]
            let wrongEnvironment = try await setToken(harness, [sandbox, "--user", "bob", "--environment", "production"], extra: accepting)
            #expect(wrongEnvironment.status == 1, "\(wrongEnvironment.output)")
            #expect(wrongEnvironment.output.contains("api_not_found"), "\(wrongEnvironment.output)")
            let notAccepted = try await setToken(harness, [sandbox, "--user", "bob", "--environment", "sandbox"])
            #expect(notAccepted.status == 1, "\(notAccepted.output)")
            #expect(notAccepted.output.contains("environment_not_accepted"), "\(notAccepted.output)")
            let found = try await setToken(harness, [sandbox, "--user", "bob"], extra: accepting)
            #expect(found.status == 0, "\(found.output)")
            #expect(found.output.contains("environment Sandbox"), "\(found.output)")

            for (arguments, message) in [
                (["20000001", "--user", "bob smith"], "--user must be"), (["2000abc", "--user", "bob"], "must be 1-32 digits"),
                (["20000001", "--user", "bob", "--environment", "xcode"], "--environment must be production or sandbox"),
            ] {
                let invalid = try await setToken(harness, arguments)
                #expect(invalid.status != 0, "\(invalid.output)")
                #expect(invalid.output.contains(message), "\(invalid.output)")
            }
        }
    }
}
