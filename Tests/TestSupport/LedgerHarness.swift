import Foundation
import Ledger
import Logging
import Pipeline
import Redis

/// The catalog of the tests: 1-, 100- and 2000-coin packs, a monthly VIP subscription, an unlock and a
/// 90-day pass.
package let testCatalog: Catalog = {
    let json = #"""
        {"products": [
          {"productId": "coins1", "type": "consumable", "coins": 1},
          {"productId": "coins100", "type": "consumable", "coins": 100},
          {"productId": "coins2000", "type": "consumable", "coins": 2000},
          {"productId": "vip.month", "type": "autoRenewable", "entitlement": "vip"},
          {"productId": "noads", "type": "nonConsumable", "entitlement": "no_ads"},
          {"productId": "pass90", "type": "nonRenewing", "entitlement": "pass", "durationDays": 90}
        ]}
        """#
    do { return try Catalog(json: Array(json.utf8)) } catch { preconditionFailure("test catalog: \(error)") }
}()

package let day: Int64 = 86_400_000
/// "Now" for the tests: 2026-01-01T00:00:00Z.
package let testNow: Int64 = 1_767_225_600_000

/// A real redis-server with both function libraries, the `fulfillers` group on the verified stream, and a
/// ledger applier reading as consumer `t`.
package struct LedgerHarness: Sendable {
    package let server: RedisServer
    package let redis: RedisPool
    package let keys = Keys(prefix: "tg")
    package let applier: LedgerApplier
    package static let group = "fulfillers"

    package static func with<T>(clamp: Bool = false, now: Int64 = testNow, _ body: (LedgerHarness) async throws -> T) async throws -> T {
        try await withRedisServer { server in
            let pool = RedisPool(configuration: server.configuration(), size: 8, logger: testLogger)
            try await pool.connect()
            defer { pool.close() }
            try await PipelineFunctions.library.load(on: pool)
            try await LedgerFunctions.library.load(on: pool)
            let keys = Keys(prefix: "tg")
            _ = try await pool.xgroupCreate(keys.verified().stream, group: group, startID: "0", makeStream: true)
            let applier = LedgerApplier(
                redis: pool, catalog: testCatalog, keys: keys, group: group,
                clampRefunds: clamp, now: { now })
            return try await body(LedgerHarness(server: server, redis: pool, applier: applier))
        }
    }

    /// Adds the event to the verified stream; returns the entry id.
    @discardableResult
    package func submit(_ event: PurchaseEvent) async throws -> String {
        guard let id = try await redis.xadd(keys.verified().stream, fields: try event.streamFields()) else {
            throw LedgerError.unexpectedReply("XADD returned nil")
        }
        return id
    }

    /// Reads the next new entries as consumer `consumer` (no ack).
    package func read(_ consumer: String = "t", count: Int = 100) async throws -> [StreamEntry] {
        try await redis.xreadgroup(
            group: Self.group, consumer: consumer, stream: keys.verified().stream, id: ">",
            count: count, block: nil)
    }

    /// Submits the event, reads it and applies it.
    @discardableResult
    package func deliver(_ event: PurchaseEvent) async throws -> LedgerOutcome {
        try await submit(event)
        var last = LedgerOutcome(outcome: "none")
        for entry in try await read() { last = try await applier.apply(entry: entry) }
        return last
    }

    /// Applies whatever is new on the stream (e.g. unparked events); returns the outcomes.
    package func drain() async throws -> [LedgerOutcome] {
        var outcomes: [LedgerOutcome] = []
        for entry in try await read() { outcomes.append(try await applier.apply(entry: entry)) }
        return outcomes
    }

    package func account(_ user: String) async throws -> EntitlementsView {
        EntitlementsView(hash: try await hash(keys.account(user: user)))
    }

    package func coins(_ user: String) async throws -> Int64 { try await account(user).coins }

    package func entitlement(_ user: String, _ name: String) async throws -> EntitlementsView.Entitlement? {
        try await account(user).entitlements.first { $0.entitlement == name }
    }

    package func hash(_ key: String) async throws -> [String: String] {
        try await redis.hgetall(key)
    }

    package func job(_ jobID: String) async throws -> JobStatus? {
        JobStatus(jobID: jobID, hash: try await hash(keys.job(jobID)))
    }

    /// The outbound events for `user`.
    package func events(_ user: String) async throws -> [StreamEntry] {
        try await redis.xrange(keys.events().stream).filter { $0.string("user") == user }
    }

    package func pendingCount() async throws -> Int {
        try await redis.xpendingSummary(keys.verified().stream, group: Self.group).count
    }

    package func audit() async throws -> LedgerAudit.Report {
        try await LedgerAudit(redis: redis, keys: keys).run()
    }
}

/// Event builders.
package enum Fixture {
    package static func transaction(
        _ tid: String, product: String, otid: String? = nil, quantity: Int = 1, purchase: Int64 = testNow - day,
        expires: Int64? = nil, revoked: Int64? = nil, family: Bool = false, token: String? = nil, signed: Int64? = nil,
        revocationType: String? = nil, revocationPercentage: Int? = nil
    ) -> PurchaseEventTransaction {
        PurchaseEventTransaction(
            transactionId: tid, originalTransactionId: otid ?? tid, productId: product, quantity: quantity,
            purchaseDate: purchase, expiresDate: expires, revocationDate: revoked,
            inAppOwnershipType: family ? "FAMILY_SHARED" : "PURCHASED", appAccountToken: token, signedDate: signed,
            revocationType: revocationType, revocationPercentage: revocationPercentage)
    }

    /// A client submission by `user` (optionally paying `order`).
    package static func client(
        _ user: String, _ transactions: [PurchaseEventTransaction], order: String? = nil,
        job: String = Job.newID(), environment: String = "Sandbox"
    ) -> PurchaseEvent {
        PurchaseEvent(
            jobId: job, kind: .transaction, source: .client, userId: user, orderNo: order,
            environment: environment, verifiedAt: testNow, transactions: transactions)
    }

    /// An Apple V2 notification.
    package static func notification(
        _ type: String, subtype: String? = nil, _ transactions: [PurchaseEventTransaction],
        renewals: [PurchaseEventRenewal] = [], uuid: String = UUID().uuidString, signed: Int64 = testNow,
        job: String = Job.newID()
    ) -> PurchaseEvent {
        PurchaseEvent(
            jobId: job, kind: .notificationV2, source: .apple, environment: "Sandbox", verifiedAt: testNow,
            transactions: transactions, renewals: renewals,
            notification: PurchaseEventNotification(
                type: type, subtype: subtype, notificationUUID: uuid,
                signedDate: signed, version: 2))
    }

    /// Writes an order as ingest does (order hash + token mapping).
    package static func order(_ harness: LedgerHarness, user: String, product: String) async throws -> Order {
        let order = Order(
            orderNo: Order.newOrderNo(), userID: user, productId: product,
            appAccountToken: Order.newAppAccountToken(), createdAtMilliseconds: testNow - 2 * day)
        var args: [any RedisArgumentConvertible] = [harness.keys.order(user: user, orderNo: order.orderNo)]
        for (name, value) in order.fields { args += [name, value] }
        _ = try await harness.redis.send(RedisCommand("HSET", arguments: args))
        _ = try await harness.redis.send(
            RedisCommand(
                "HSET", harness.keys.appAccountToken(order.appAccountToken), Order.TokenField.user, user,
                Order.TokenField.orderNo, order.orderNo))
        return order
    }
}
