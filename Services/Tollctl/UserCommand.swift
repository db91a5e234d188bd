import ArgumentParser
import Core
import Foundation
import Ledger
import Pipeline
import Redis

/// `tollctl user USERID`: the user as `GET /v1/users/{id}` shows them (``CustomerInfo``, one read): coins, granted
/// coins, the refund shortfall and last event seq; entitlements (as `GET /v1/users/{id}/entitlements` shows them,
/// grants merged in); ledger counters (refund shortfall, fraud signals); subscriptions' renewal state; transactions,
/// orders and grants (`tollctl grants` lists the grants alone); then, when it holds anything, the user's sandbox side
/// (``Pipeline/LedgerSide``: its coins, entitlements and transactions, apart). `--json` prints the customer API's JSON
/// instead.
struct UserCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "user", abstract: "Show a user's coins, entitlements, subscriptions, transactions, orders and grants.")

    @Argument(help: "The user id.")
    var userID: String

    @OptionGroup var project: ProjectOption

    @Flag(help: "Print the customer API's JSON (GET /v1/users/{id}).")
    var json = false

    func validate() throws {
        guard UserID.isValid(userID) else { throw ValidationError("USERID must be 1-128 ASCII letters, digits, '-', '_', '.' or '@'") }
    }

    func run() async throws {
        let project = try self.project.resolve()
        try await UserLedgerConnection.with { redis, allKeys in
            let keys = allKeys.inProject(project)
            let info = try await CustomerInfo.read(on: redis, keys: keys, user: userID)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            if json {
                print(String(decoding: info.json(nowMilliseconds: now), as: UTF8.self))
                return
            }
            let view = EntitlementsView(hash: info.account, grants: info.grantList, nowMilliseconds: now)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            print("user \(userID)" + (project.isDefault ? "" : "  project=\(project)"))
            print("entitlements \(String(decoding: try encoder.encode(view), as: UTF8.self))")
            let counters = info.meta.filter { $0.key == "shortfall" || $0.key.hasPrefix("fraud:") }.sorted { $0.key < $1.key }
            if !counters.isEmpty { print("counters " + counters.map { "\($0.key)=\($0.value)" }.joined(separator: "  ")) }
            print("events lastSeq=\(info.account["events.seq"] ?? "0")  coinsGranted=\(info.account["coins.granted"] ?? "0")")
            for subscription in info.subscriptions {
                var parts = [
                    "subscription \(subscription.entitlement)", "autoRenew=\(subscription.autoRenewStatus.map(String.init) ?? "-")",
                ]
                if let product = subscription.autoRenewProductId { parts.append("autoRenewProduct=\(product)") }
                if let intent = subscription.expirationIntent { parts.append("expirationIntent=\(intent)") }
                if subscription.inBillingRetry { parts.append("billingRetry=true") }
                if let grace = subscription.gracePeriodExpiresAt { parts.append("grace=\(Self.date(grace))") }
                if !subscription.eligibleWinBackOfferIds.isEmpty {
                    parts.append("winBackOffers=\(subscription.eligibleWinBackOfferIds.joined(separator: ","))")
                }
                print(parts.joined(separator: "  "))
            }
            print("transactions \(info.transactionsTotal)")
            for record in info.transactions.reversed() { print(Self.line(record)) }
            if info.transactionsTotal > info.transactions.count {
                print("  … the newest \(info.transactions.count) shown")
            }
            print("orders \(info.ordersTotal)")
            for order in info.orders.reversed() {
                var parts = [
                    "  \(order.orderNo)", "product=\(order.productId)", "state=\(order.state.rawValue)",
                    "created=\(Self.date(order.createdAtMilliseconds))",
                ]
                if let paid = order.paidAtMilliseconds { parts.append("paid=\(Self.date(paid))") }
                if let transaction = order.transactionId { parts.append("transaction=\(transaction)") }
                print(parts.joined(separator: "  "))
            }
            print("grants \(info.grants.count)")
            for (id, grant) in info.grants.sorted(by: { $0.key < $1.key }) { print("  \(id)  \(grant)") }
            if let sandbox = info.sandbox {
                let view = EntitlementsView(hash: sandbox.account, nowMilliseconds: now)
                print("sandbox side")
                print("  entitlements \(String(decoding: try encoder.encode(view), as: UTF8.self))")
                print("  events lastSeq=\(sandbox.account["events.seq"] ?? "0")  coinsSpent=\(sandbox.account["coins.spent"] ?? "0")")
                print("  transactions \(sandbox.transactionsTotal)")
                for record in sandbox.transactions.reversed() { print("  " + Self.line(record)) }
            }
        }
    }

    static func date(_ ms: Int64) -> String {
        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }

    static func line(_ record: TransactionRecord) -> String {
        var parts = [
            record.transactionId, "original=\(record.originalTransactionId)", "product=\(record.productId)",
            "type=\(record.type)", "state=\(record.state)", "coins=\(record.coins)", "debited=\(record.debited)",
            "environment=\(record.environment)", "purchased=\(date(record.purchaseDate))",
        ]
        if record.shortfall > 0 { parts.append("shortfall=\(record.shortfall)") }
        if let type = record.revocationType { parts.append("revocationType=\(type)") }
        if let share = record.revocationPercentage { parts.append("revocationPercentage=\(share)") }
        if let expires = record.expiresDate { parts.append("expires=\(date(expires))") }
        if let offer = record.offer { parts.append("offer=\(offer)  offerSigned=\(record.offerSigned == true)") }
        if record.withheld { parts.append("withheld=true") }
        if let price = record.price { parts.append("price=\(price)\(record.currency.map { " " + $0 } ?? "")") }
        if let storefront = record.storefront { parts.append("storefront=\(storefront)") }
        return "  " + parts.joined(separator: "  ")
    }
}
