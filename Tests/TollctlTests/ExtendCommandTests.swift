import AppStore
import Core
import Foundation
import HTTPClient
import TestSupport
import Testing

/// `tollctl apple extend`, `extend-all`, `extend-status` and `app-transaction`: the real binary against the real
/// simulator's App Store Server API. An extension moves Apple's renewal date and makes Apple send
/// `RENEWAL_EXTENDED` (the ledger's input); a repeated request identifier is the same request; Apple's limits
/// (two extensions a year, active subscriptions only) end the command with exit 1; an app transaction is shown only
/// when it verifies.
@Suite(.serialized)
struct ExtendCommandTests {
    private func subscribe(_ harness: StoreHarness, seconds: Int = 3600) async throws -> String {
        let bought = try await harness.sim.purchase([
            "productId": "com.example.vip.month", "type": "Auto-Renewable Subscription", "expiresInSeconds": seconds,
        ])
        return try #require(bought["transactionId"] as? String)
    }

    private func renewalExtendedCount(_ harness: StoreHarness, original: String) async throws -> Int {
        let response = try await harness.sim.send(.get, "/sim/notifications")
        let notifications = JSONValue.read(response.body)?["notifications"]?.array ?? []
        return notifications.filter {
            $0["notificationType"]?.string == "RENEWAL_EXTENDED" && $0["originalTransactionId"]?.string == original
        }.count
    }

    /// The date after `renews ` in the command's output.
    private func renewalDate(_ output: String) throws -> Date {
        let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("success true renews ") })
        return try #require(ISO8601DateFormatter().date(from: String(line.dropFirst("success true renews ".count))))
    }

    @Test func anExtensionMovesTheRenewalDateOnceAndAppleSaysSo() async throws {
        try await StoreHarness.with { harness in
            let original = try await subscribe(harness)
            let environment = harness.environment(try harness.apiSettings())
            let requestID = UUID().uuidString.lowercased()
            let started = Date()
            let first = try await ChildProcess.run(
                "tollctl", arguments: ["apple", "extend", original, "--days", "10", "--reason", "3", "--request-id", requestID],
                environment: environment)
            #expect(first.status == 0, "\(first.output)")
            #expect(first.output.contains("environment Production"))
            #expect(first.output.contains("request \(requestID)"))
            let renews = try renewalDate(first.output)
            // An hour's subscription, ten days later.
            #expect(abs(renews.timeIntervalSince(started) - (10 * 86_400 + 3_600)) < 120, "\(first.output)")
            #expect(try await renewalExtendedCount(harness, original: original) == 1)

            // The same request again: Apple's first answer, nothing moved, nothing sent.
            let again = try await ChildProcess.run(
                "tollctl", arguments: ["apple", "extend", original, "--days", "10", "--request-id", requestID],
                environment: environment)
            #expect(again.status == 0, "\(again.output)")
            #expect(try renewalDate(again.output) == renews)
            #expect(try await renewalExtendedCount(harness, original: original) == 1)

            // A second extension is allowed, a third in the same year is not.
            let second = try await ChildProcess.run(
                "tollctl", arguments: ["apple", "extend", original, "--days", "1"], environment: environment)
            #expect(second.status == 0, "\(second.output)")
            let third = try await ChildProcess.run(
                "tollctl", arguments: ["apple", "extend", original, "--days", "1"], environment: environment)
            #expect(third.status != 0, "\(third.output)")
            #expect(third.output.contains("api_request_rejected") && third.output.contains("4030005"), "\(third.output)")
            #expect(!third.output.contains("success true"))
            #expect(try await renewalExtendedCount(harness, original: original) == 2)
        }
    }

    @Test func aLapsedOrUnknownSubscriptionIsNotExtended() async throws {
        try await StoreHarness.with { harness in
            let lapsing = try await subscribe(harness, seconds: 1)
            let environment = harness.environment(try harness.apiSettings())
            try await Task.sleep(for: .seconds(2))
            let lapsed = try await ChildProcess.run(
                "tollctl", arguments: ["apple", "extend", lapsing, "--days", "5"], environment: environment)
            #expect(lapsed.status != 0, "\(lapsed.output)")
            #expect(lapsed.output.contains("4030004"), "\(lapsed.output)")
            #expect(try await renewalExtendedCount(harness, original: lapsing) == 0)
            let unknown = try await ChildProcess.run(
                "tollctl", arguments: ["apple", "extend", "2999999999999999", "--days", "5"], environment: environment)
            #expect(unknown.status != 0, "\(unknown.output)")
            #expect(unknown.output.contains("api_not_found"), "\(unknown.output)")
            let invalid = try await ChildProcess.run(
                "tollctl", arguments: ["apple", "extend", lapsing, "--days", "91"], environment: environment)
            #expect(invalid.status != 0)
            #expect(invalid.output.contains("--days must be 1-90"), "\(invalid.output)")
        }
    }

    @Test func extendAllExtendsEveryActiveSubscriberAndReportsIt() async throws {
        try await StoreHarness.with { harness in
            let first = try await subscribe(harness)
            let second = try await subscribe(harness)
            let lapsing = try await subscribe(harness, seconds: 1)
            try await Task.sleep(for: .seconds(2))
            let environment = harness.environment(try harness.apiSettings())
            let run = try await ChildProcess.run(
                "tollctl", arguments: ["apple", "extend-all", "com.example.vip.month", "--days", "3"], environment: environment)
            #expect(run.status == 0, "\(run.output)")
            let line = try #require(run.output.split(separator: "\n").first { $0.hasPrefix("request ") })
            let requestID = String(line.dropFirst("request ".count))
            #expect(UUID(uuidString: requestID) != nil)
            #expect(try await renewalExtendedCount(harness, original: first) == 1)
            #expect(try await renewalExtendedCount(harness, original: second) == 1)
            #expect(try await renewalExtendedCount(harness, original: lapsing) == 0)

            let status = try await ChildProcess.run(
                "tollctl", arguments: ["apple", "extend-status", "com.example.vip.month", requestID], environment: environment)
            #expect(status.status == 0, "\(status.output)")
            #expect(status.output.contains("complete true"))
            #expect(status.output.contains("succeeded 2 failed 0"), "\(status.output)")

            let unknown = try await ChildProcess.run(
                "tollctl", arguments: ["apple", "extend-status", "com.example.vip.month", UUID().uuidString], environment: environment)
            #expect(unknown.status != 0, "\(unknown.output)")
        }
    }

    @Test func anAppTransactionIsShownOnlyWhenItVerifies() async throws {
        try await StoreHarness.with { harness in
            let bought = try await harness.sim.purchase()
            let id = try #require(bought["transactionId"] as? String)
            var environment = harness.environment(try harness.apiSettings())
            let run = try await ChildProcess.run("tollctl", arguments: ["apple", "app-transaction", id], environment: environment)
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("environment Production verified"))
            #expect(run.output.contains("appTransactionId 70\(id) bundle com.example.app"), "\(run.output)")
            // Trusting only Apple's real root, the simulator's signature is a forgery: nothing of it is shown.
            environment.removeValue(forKey: "TOLLGATE_ROOT_CERTS")
            let forged = try await ChildProcess.run("tollctl", arguments: ["apple", "app-transaction", id], environment: environment)
            #expect(forged.status != 0, "\(forged.output)")
            #expect(forged.output.contains("app_transaction_not_verified"), "\(forged.output)")
            #expect(!forged.output.contains("appTransactionId"))
        }
    }
}
