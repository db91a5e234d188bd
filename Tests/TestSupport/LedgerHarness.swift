import Foundation
package import Ledger
import Logging
package import Pipeline
package import Redis
import Synchronization

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

/// A real redis-server with both function libraries, the `fulfillers` group on the verified stream(s), and a
/// ledger applier reading as consumer `t`.
///
/// `TOLLGATE_TEST_PARTITIONS` (default 1) runs the ledger tests with that many partitions: every command then goes
/// through ``CheckedExecutor`` (``CheckedExecutor/Checks/sameSlot``), which refuses a command whose keys span two Redis Cluster slots exactly as the
/// cluster client does, and the harness delivers an event as ingest places it (a client's in the submitter's
/// partition, Apple's in its purchase chain's) and follows hand-overs between partitions until all is applied.
package struct LedgerHarness: Sendable {
    /// The redis-server, unless the harness runs on a cluster (``on(_:partitions:prefix:clamp:now:_:)``).
    package let serverIfAny: RedisServer?
    package var server: RedisServer {
        guard let serverIfAny else { preconditionFailure("a harness on a Redis Cluster has no single server") }
        return serverIfAny
    }
    package let redis: any RedisCommandExecutor
    package let keys: Keys
    package let applier: LedgerApplier
    package static let group = "fulfillers"
    /// Entries a ``deliver(_:)`` read but left for the next ``drain()``: new work its event caused (unparked events,
    /// parts for other owners), as opposed to hand-overs of the event itself, which it follows.
    private let stash = Stash()

    private final class Stash: Sendable {
        let entries = Mutex<[Read]>([])
    }

    /// One verified-stream entry and the partition it was read from.
    package struct Read: Sendable {
        package var entry: StreamEntry
        package var partition: Partition
        package var id: String { entry.id }
    }

    /// The partitions the ledger tests run with (`TOLLGATE_TEST_PARTITIONS`, default 1).
    package static var testPartitions: Int {
        ProcessInfo.processInfo.environment["TOLLGATE_TEST_PARTITIONS"].flatMap { Int($0) } ?? 1
    }

    package static func with<T>(
        clamp: Bool = false, now: Int64 = testNow, partitions: Int = testPartitions, repeatFreeTrial: RepeatFreeTrial = .allow,
        _ body: (LedgerHarness) async throws -> T
    ) async throws -> T {
        try await withRedisServer { server in
            try await on(server, partitions: partitions, clamp: clamp, now: now, repeatFreeTrial: repeatFreeTrial, body)
        }
    }

    /// A harness on a running redis-server (whatever it already holds), with `partitions` partitions.
    package static func on<T>(
        _ server: RedisServer, partitions: Int, clamp: Bool = false, now: Int64 = testNow,
        repeatFreeTrial: RepeatFreeTrial = .allow, _ body: (LedgerHarness) async throws -> T
    ) async throws -> T {
        let pool = RedisPool(configuration: server.configuration(), size: 8, logger: testLogger)
        try await pool.connect()
        defer { pool.close() }
        let keys = Keys(prefix: "tg", layout: try PartitionLayout(count: partitions))
        let redis: any RedisCommandExecutor = partitions == 1 ? pool : CheckedExecutor(pool, .sameSlot)
        return try await body(
            try await prepare(
                server: server, redis: redis, keys: keys, clamp: clamp, now: now, repeatFreeTrial: repeatFreeTrial))
    }

    /// Records the layout and the data version as the first service does on an empty Redis (``Keys/checkLayout(on:)``;
    /// the streams made next would otherwise read as data from before the layout record), loads both libraries, creates
    /// the fulfillers' group on every partition's verified stream, and builds the harness's applier.
    private static func prepare(
        server: RedisServer?, redis: any RedisCommandExecutor, keys: Keys, clamp: Bool, now: Int64,
        repeatFreeTrial: RepeatFreeTrial = .allow
    ) async throws -> LedgerHarness {
        try await keys.checkLayout(on: redis)
        try await PipelineFunctions.library.load(on: redis)
        try await LedgerFunctions.library.load(on: redis)
        for partition in keys.partitions {
            _ = try await redis.xgroupCreate(keys.verified(partition: partition).stream, group: group, startID: "0", makeStream: true)
        }
        // The applier's every command must declare its keys; the tests' own (seeding, checks) may be built by name.
        var applier = LedgerApplier(
            redis: CheckedExecutor(redis, .declaredKeys), catalog: testCatalog, keys: keys, group: group, clampRefunds: clamp, now: { now })
        applier.repeatFreeTrial = repeatFreeTrial
        return LedgerHarness(serverIfAny: server, redis: redis, keys: keys, applier: applier)
    }

    /// A harness on a real Redis Cluster through ``RedisClusterClient`` (which refuses cross-slot commands), its keys
    /// under `prefix` so that several harnesses share one cluster.
    package static func on<T>(
        _ cluster: RedisCluster, partitions: Int = 16, prefix: String, clamp: Bool = false, now: Int64 = testNow,
        _ body: (LedgerHarness) async throws -> T
    ) async throws -> T {
        let client = try await cluster.connectedClient()
        defer { client.close() }
        let keys = Keys(prefix: prefix, layout: try PartitionLayout(count: partitions))
        return try await body(try await prepare(server: nil, redis: client, keys: keys, clamp: clamp, now: now))
    }

    /// The partition ingest starts the event's job in: the submitter's, else its first purchase chain's.
    package func partition(of event: PurchaseEvent) -> Partition {
        if let user = event.userId { return keys.partition(ofUser: user) }
        let otid = event.transactions.first?.originalTransactionId ?? event.renewals.first?.originalTransactionId
        return otid.map { keys.partition(ofOriginalTransaction: $0) } ?? 0
    }

    /// Adds the event to the verified stream of its partition; returns the entry id.
    @discardableResult
    package func submit(_ event: PurchaseEvent) async throws -> String {
        guard let id = try await redis.xadd(keys.verified(partition: partition(of: event)).stream, fields: try event.streamFields()) else {
            throw LedgerError.unexpectedReply("XADD returned nil")
        }
        return id
    }

    /// Reads the next new entries of every partition as consumer `consumer` (no ack).
    package func read(_ consumer: String = "t", count: Int = 100) async throws -> [Read] {
        var found: [Read] = []
        for partition in keys.partitions {
            let entries = try await redis.xreadgroup(
                group: Self.group, consumer: consumer, stream: keys.verified(partition: partition).stream, id: ">",
                count: count, block: nil)
            found += entries.map { Read(entry: $0, partition: partition) }
        }
        return found
    }

    /// Applies one read entry in its partition.
    package func apply(_ read: Read) async throws -> LedgerOutcome {
        try await applier.apply(entry: read.entry, partition: read.partition)
    }

    /// Submits the event, reads what is new and applies it; with several partitions, also the hand-overs of its entry
    /// to other partitions (entries with `ledger.from` of its job), leaving any other entry those rounds find to the
    /// next ``drain()``, as one partition would. Returns the event's outcome: its own entry's, or once that was handed
    /// over, the outcome where it was applied.
    @discardableResult
    package func deliver(_ event: PurchaseEvent) async throws -> LedgerOutcome {
        let id = try await submit(event)
        let home = partition(of: event)
        var outcome: LedgerOutcome?
        for round in 0..<16 {
            let batch = try await read()
            for read in batch {
                let ours =
                    round == 0
                    ? read.id == id && read.partition == home
                    : read.entry.string(LedgerDelivery.Field.from) != nil && read.entry.string(PurchaseEvent.jobIDField) == event.jobId
                guard round == 0 || ours else {
                    stash.entries.withLock { $0.append(read) }
                    continue
                }
                let applied = try await apply(read)
                if ours, outcome == nil || outcome?.outcome == .forwarded { outcome = applied }
            }
            if batch.isEmpty || keys.layout.isSingle || outcome?.outcome != .forwarded { break }
        }
        guard let outcome else { throw LedgerError.unexpectedReply("no entry of job \(event.jobId) was applied") }
        return outcome
    }

    /// Applies whatever is new on the streams (e.g. unparked events, and what a ``deliver(_:)`` left); returns the
    /// outcomes, hand-overs between partitions left out.
    package func drain() async throws -> [LedgerOutcome] {
        var outcomes: [LedgerOutcome] = []
        for read in stash.entries.withLock({ stashed in
            defer { stashed = [] }
            return stashed
        }) {
            outcomes.append(try await apply(read))
        }
        for _ in 0..<16 {
            let batch = try await read()
            for read in batch { outcomes.append(try await apply(read)) }
            if batch.isEmpty || keys.layout.isSingle { break }
        }
        return outcomes.filter { $0.outcome != .forwarded }
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

    /// A job's status, in whichever partition its event was last applied (following `moved.to`).
    package func job(_ jobID: String) async throws -> JobStatus? {
        var found: JobStatus?
        for partition in keys.partitions {
            let hash = try await hash(keys.job(jobID, partition: partition))
            if hash["moved.to"] == nil, let status = JobStatus(jobID: jobID, hash: hash) { found = status }
        }
        return found
    }

    /// The outbound events for `user` (in the user's partition).
    package func events(_ user: String) async throws -> [StreamEntry] {
        try await redis.xrange(keys.events(partition: keys.partition(ofUser: user)).stream).filter { $0.string("user") == user }
    }

    /// Every partition's outbound events, in order per partition.
    package func allEvents() async throws -> [StreamEntry] {
        var all: [StreamEntry] = []
        for partition in keys.partitions { all += try await redis.xrange(keys.events(partition: partition).stream) }
        return all
    }

    /// How many outbound events every partition's events stream holds.
    package func eventsCount() async throws -> Int {
        var total = 0
        for partition in keys.partitions { total += try await redis.xlen(keys.events(partition: partition).stream) }
        return total
    }

    /// Entries of every partition's verified stream not yet delivered to the fulfillers' group.
    package func undeliveredCount() async throws -> Int {
        var total = 0
        for partition in keys.partitions {
            let stream = keys.verified(partition: partition).stream
            let length = try await redis.xlen(stream)
            let last = try await redis.lastEntryID(of: stream)
            for group in try await redis.xinfoGroups(stream) where group.name == Self.group {
                total += group.undelivered(streamLength: length, lastEntry: last)
            }
        }
        return total
    }

    /// The environment a service process of this harness runs with: its Redis and its partitions.
    package var serviceEnvironment: [String: String] {
        ["TOLLGATE_REDIS_URL": server.url, "TOLLGATE_PARTITIONS": String(keys.layout.count)]
    }

    package func pendingCount() async throws -> Int {
        var total = 0
        for partition in keys.partitions {
            total += try await redis.xpendingSummary(keys.verified(partition: partition).stream, group: Self.group).count
        }
        return total
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
        revocationType: String? = nil, revocationPercentage: Int? = nil, offerType: Int? = nil,
        offerIdentifier: String? = nil, offerDiscountType: String? = nil
    ) -> PurchaseEventTransaction {
        PurchaseEventTransaction(
            transactionId: tid, originalTransactionId: otid ?? tid, productId: product, quantity: quantity,
            purchaseDate: purchase, expiresDate: expires, revocationDate: revoked,
            inAppOwnershipType: family ? "FAMILY_SHARED" : "PURCHASED", appAccountToken: token, signedDate: signed,
            offerType: offerType, revocationType: revocationType, revocationPercentage: revocationPercentage,
            offerIdentifier: offerIdentifier, offerDiscountType: offerDiscountType)
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
