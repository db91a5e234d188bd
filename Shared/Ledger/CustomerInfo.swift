package import Core
import Foundation
package import Pipeline
package import Redis

/// What `GET /v1/users/{userId}` answers (issue 31): one user as the ledger holds them, read in one call of the
/// `tollgate_customer_v2` library (`Lua/customer.lua`) so that coins, entitlements, transactions and orders agree.
///
/// Field names are the events' (docs/EVENTS.md): `productId`, `transactionId`, `price`, `currency`, … Times are ISO
/// 8601 UTC with milliseconds. Transactions and orders are the newest ``limit``, with their totals.
///
/// The top-level figures are the user's primary side (the deployment's own environment). A production deployment's
/// sandbox purchases (App Review, TestFlight) are on the user's sandbox side (``LedgerSide``), answered apart as
/// `sandbox` (its coins, entitlements, subscriptions and transactions) and never counted in the top-level figures.
package struct CustomerInfo: Sendable {
    /// The Redis Function library of the read.
    package static let library = RedisFunctionLibrary(
        "customer", version: 2, functions: ["read"], parts: [SharedLua.common, PackageResources.customer_lua])
    /// The most transactions and orders one answer lists (newest first).
    package static let limit = 200

    package var userId: String
    package var account: [String: String]
    package var meta: [String: String]
    /// The grants hash: grantId → the grant's JSON, as the ledger wrote it.
    package var grants: [String: String]
    package var transactions: [TransactionRecord]
    package var transactionsTotal: Int
    package var orders: [Order]
    package var ordersTotal: Int
    /// The user's sandbox side (account, meta, transactions; no orders or grants, which are one per user), when it
    /// holds anything.
    package var sandbox: Side?

    /// One side's own ledger: what the sandbox side holds.
    package struct Side: Sendable {
        package var account: [String: String]
        package var meta: [String: String]
        package var transactions: [TransactionRecord]
        package var transactionsTotal: Int

        /// True when the side holds nothing.
        package var isEmpty: Bool { account.isEmpty && meta.isEmpty && transactionsTotal == 0 }
    }

    /// Reads one user, both sides; Redis errors propagate.
    package static func read(on redis: any RedisCommandExecutor, keys unsided: Keys, user: String) async throws -> CustomerInfo {
        let keys = unsided.on(.primary)
        let sandbox = unsided.on(.sandbox)
        let reply = try await library.call(
            "read", on: redis,
            keys: [
                keys.account(user: user), keys.ledgerMeta(user: user), keys.transactions(user: user),
                keys.orders(user: user), keys.grants(user: user), sandbox.account(user: user),
                sandbox.ledgerMeta(user: user), sandbox.transactions(user: user),
            ],
            arguments: [
                Array(keys.transaction(user: user, transactionId: "").utf8), Array(keys.order(user: user, orderNo: "").utf8),
                Array(String(limit).utf8), Array(sandbox.transaction(user: user, transactionId: "").utf8),
            ])
        guard let info = CustomerInfo(user: user, reply: reply) else {
            throw PipelineError.unexpectedReply("\(library.function("read")) returned \(reply)")
        }
        return info
    }

    /// Decodes the read's reply: `{account, meta, grants, transaction count, {transaction…}, order count, {order…},
    /// sandbox account, sandbox meta, sandbox transaction count, {sandbox transaction…}}`.
    init?(user: String, reply: RedisReply) {
        guard let parts = reply.array, parts.count == 11, let txs = parts[4].array, let orders = parts[6].array,
            let sandboxTxs = parts[10].array
        else {
            return nil
        }
        let sandbox = Side(
            account: parts[7].fieldValues, meta: parts[8].fieldValues,
            transactions: sandboxTxs.compactMap { TransactionRecord(hash: $0.fieldValues) },
            transactionsTotal: Int(parts[9].int ?? 0))
        self.sandbox = sandbox.isEmpty ? nil : sandbox
        userId = user
        account = parts[0].fieldValues
        meta = parts[1].fieldValues
        grants = parts[2].fieldValues
        transactionsTotal = Int(parts[3].int ?? 0)
        transactions = txs.compactMap { TransactionRecord(hash: $0.fieldValues) }
        ordersTotal = Int(parts[5].int ?? 0)
        self.orders = orders.compactMap { Order(hash: $0.fieldValues) }
    }

    /// The grants, oldest first (``LedgerGrants/Grant``).
    package var grantList: [LedgerGrants.Grant] { LedgerGrants.parse(values: grants.values.map { Array($0.utf8) }) }

    /// True when the ledger holds nothing of the user, on either side.
    package var isEmpty: Bool {
        account.isEmpty && meta.isEmpty && grants.isEmpty && transactionsTotal == 0 && ordersTotal == 0 && sandbox == nil
    }

    /// Every transaction the answer lists, both sides (each record names its environment).
    package var allTransactions: [TransactionRecord] { transactions + (sandbox?.transactions ?? []) }

    /// The answer's JSON; `now` decides which entitlements have run out.
    package func json(nowMilliseconds now: Int64) -> [UInt8] {
        var writer = JSONWriter(capacity: 1024)
        writer.beginObject()
        writer.member("userId", userId)
        let grantList = grantList
        Self.writeLedger(
            Side(account: account, meta: meta, transactions: transactions, transactionsTotal: transactionsTotal),
            grants: grantList, now: now, to: &writer)
        writer.array("orders", orders) { order, writer in
            writer.beginObject()
            writer.member("orderNo", order.orderNo)
            writer.member("productId", order.productId)
            writer.member("state", order.state.rawValue)
            writer.member("appAccountToken", order.appAccountToken)
            writer.member("createdAt", Self.iso8601(order.createdAtMilliseconds))
            writer.member("paidAt", order.paidAtMilliseconds.map(Self.iso8601))
            writer.member("transactionId", order.transactionId)
            writer.member("side", order.paidBySide)
            writer.endObject()
        }
        writer.member("ordersTotal", ordersTotal)
        writer.array("grants", grantList) { grant, writer in
            writer.beginObject()
            writer.member("grantId", grant.grantId)
            writer.member("userId", userId)
            writer.member("entitlement", grant.entitlement)
            writer.member("coins", grant.coins)
            writer.member("until", grant.until.map(Self.iso8601))
            writer.member("reason", grant.reason)
            writer.member("by", grant.by)
            writer.member("at", Self.iso8601(grant.at))
            writer.endObject()
        }
        if let sandbox {
            writer.key("sandbox")
            writer.beginObject()
            writer.member("environment", "sandbox")
            Self.writeLedger(sandbox, grants: [], now: now, to: &writer)
            writer.endObject()
        }
        writer.endObject()
        return writer.bytes
    }

    /// One side's figures: coins, entitlements (with `grants` merged in), subscriptions and transactions.
    private static func writeLedger(_ side: Side, grants: [LedgerGrants.Grant], now: Int64, to writer: inout JSONWriter) {
        let account = side.account
        writer.member("coins", account[EntitlementsView.Field.coins].flatMap { Int64($0) } ?? 0)
        writer.member("coinsGranted", account["coins.granted"].flatMap { Int64($0) } ?? 0)
        // Spent through the customer API, in all (docs/EVENTS.md, `coins.spent`).
        writer.member("coinsSpent", account["coins.spent"].flatMap { Int64($0) } ?? 0)
        // What refunds could not take back because the coins were spent (clamped at zero; docs/ARCHITECTURE.md).
        writer.member("shortfall", side.meta["shortfall"].flatMap { Int64($0) } ?? 0)
        writer.member("lastEventSeq", account["events.seq"].flatMap { Int64($0) } ?? 0)
        let view = EntitlementsView(hash: account, grants: grants, nowMilliseconds: now)
        writer.array("entitlements", view.entitlements) { entitlement, writer in
            writer.beginObject()
            writer.member("entitlement", entitlement.entitlement)
            writer.member("state", entitlement.state)
            writer.key("expiresAt")
            if let expires = entitlement.expiresAt { writer.string(expires) } else { writer.null() }
            writer.member("autoRenew", entitlement.autoRenew)
            writer.member("source", entitlement.source)
            if let sources = entitlement.sources { writer.array("sources", sources) { $1.string($0) } }
            if let grant = entitlement.grant {
                writer.key("grant")
                writer.beginObject()
                writer.member("grantId", grant.grantId)
                writer.member("by", grant.by)
                writer.member("reason", grant.reason)
                writer.member("until", grant.until)
                writer.endObject()
            }
            writer.endObject()
        }
        writer.array("subscriptions", subscriptions(meta: side.meta)) { $0.write(to: &$1) }
        writer.array("transactions", side.transactions) { write($0, to: &$1) }
        writer.member("transactionsTotal", side.transactionsTotal)
    }

    /// One subscription's renewal state, from the ledger meta's `r:<entitlement>:*` fields.
    package struct Subscription: Sendable, Equatable {
        package var entitlement: String
        package var autoRenewStatus: Int?
        package var autoRenewProductId: String?
        package var expirationIntent: Int?
        package var inBillingRetry: Bool
        package var gracePeriodExpiresAt: Int64?
        package var eligibleWinBackOfferIds: [String]
        package var signedAt: Int64?

        func write(to writer: inout JSONWriter) {
            writer.beginObject()
            writer.member("entitlement", entitlement)
            writer.member("autoRenewStatus", autoRenewStatus)
            writer.member("autoRenewProductId", autoRenewProductId)
            writer.member("expirationIntent", expirationIntent)
            writer.member("inBillingRetry", inBillingRetry)
            writer.member("gracePeriodExpiresAt", gracePeriodExpiresAt.map(CustomerInfo.iso8601))
            writer.array("eligibleWinBackOfferIds", eligibleWinBackOfferIds) { $1.string($0) }
            writer.member("signedAt", signedAt.map(CustomerInfo.iso8601))
            writer.endObject()
        }
    }

    /// The subscriptions the ledger holds renewal state of, by entitlement name (the primary side's).
    package var subscriptions: [Subscription] { Self.subscriptions(meta: meta) }

    /// The subscriptions a ledger meta hash holds renewal state of, by entitlement name.
    static func subscriptions(meta: [String: String]) -> [Subscription] {
        let names = Set(
            meta.keys.compactMap { field -> String? in
                guard field.hasPrefix("r:"), field.hasSuffix(":signed") else { return nil }
                return String(field.dropFirst(2).dropLast(7))
            })
        return names.sorted().map { name in
            func field(_ suffix: String) -> String? { meta["r:\(name):\(suffix)"] }
            return Subscription(
                entitlement: name, autoRenewStatus: field("auto").flatMap { Int($0) }, autoRenewProductId: field("aprod"),
                expirationIntent: field("intent").flatMap { Int($0) }, inBillingRetry: field("retry") == "1",
                gracePeriodExpiresAt: field("grace").flatMap { Int64($0) },
                eligibleWinBackOfferIds: field("winback").map { $0.split(separator: ",").map(String.init) } ?? [],
                signedAt: field("signed").flatMap { Int64($0) })
        }
    }

    /// One transaction as the events spell it.
    package static func write(_ record: TransactionRecord, to writer: inout JSONWriter) {
        writer.beginObject()
        writer.member("transactionId", record.transactionId)
        writer.member("originalTransactionId", record.originalTransactionId)
        writer.member("productId", record.productId)
        writer.member("type", record.type)
        writer.member("environment", record.environment.lowercased())
        writer.member("state", record.state)
        writer.member("quantity", record.quantity)
        writer.member("purchasedAt", iso8601(record.purchaseDate))
        writer.member("expiresAt", record.expiresDate.map(iso8601))
        writer.member("price", record.price)
        writer.member("currency", record.currency)
        writer.member("storefront", record.storefront)
        writer.member("offerType", record.offerType)
        writer.member("offerIdentifier", record.offerIdentifier)
        writer.member("ownershipType", record.familyShared ? "FAMILY_SHARED" : "PURCHASED")
        writer.member("coins", record.coins)
        if record.withheld { writer.member("withheld", true) }
        if record.revocationType != nil || record.revokedAt != nil || record.debited > 0 || record.shortfall > 0 {
            writer.key("refund")
            writer.beginObject()
            writer.member("refundedAt", record.revokedAt.map(iso8601))
            writer.member("revocationType", record.revocationType)
            writer.member("revocationPercentage", record.revocationPercentage)
            writer.member("debited", record.debited)
            writer.member("shortfall", record.shortfall)
            writer.endObject()
        }
        writer.endObject()
    }

    package static func iso8601(_ milliseconds: Int64) -> String { EntitlementsView.iso8601(milliseconds) }
}
