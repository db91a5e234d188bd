import Foundation
import Pipeline
import Redis

/// Applies verified purchase events to the ledger: resolves the owner, then makes the one atomic
/// function call that acks the verified-stream entry and writes every effect (or parks the event while no
/// owner is known). Idempotent: replays, redeliveries and racing replicas change nothing twice.
package struct LedgerApplier: Sendable {
    package let redis: any RedisCommandExecutor
    package let catalog: Catalog
    package let keys: Keys
    /// The verified stream's consumer group.
    package let group: String
    /// Clamp balances at 0 on refunds (`TOLLGATE_CLAMP_REFUNDS`), recording the shortfall.
    package let clampRefunds: Bool
    /// Milliseconds since 1970; entitlement states are computed at this time.
    package let now: @Sendable () -> Int64

    package init(
        redis: any RedisCommandExecutor, catalog: Catalog, keys: Keys, group: String, clampRefunds: Bool,
        now: @escaping @Sendable () -> Int64
    ) {
        self.redis = redis
        self.catalog = catalog
        self.keys = keys
        self.group = group
        self.clampRefunds = clampRefunds
        self.now = now
    }

    /// Applies the event in `entry` (read from the verified stream by this group). Re-resolves the owner when
    /// a binding appeared between the lookup and the call.
    package func apply(entry: StreamEntry) async throws -> LedgerOutcome {
        let delivery = try LedgerDelivery(entry: entry)
        let stream = keys.verified().stream
        for _ in 0..<4 {
            let resolution = try await resolveOwner(delivery.event)
            let outcome: LedgerOutcome
            if let owner = resolution.user {
                let plan = LedgerPlan(
                    delivery: delivery, owner: owner, resolution: resolution, catalog: catalog,
                    keys: keys, stream: stream, clamp: clampRefunds, now: now())
                outcome = try await LedgerFunctions.call(
                    "apply", on: redis, keys: plan.keys, group: group, id: entry.id,
                    plan: try plan.json())
            } else {
                outcome = try await park(delivery, entry: entry, stream: stream)
            }
            if outcome.outcome != "reresolve" { return outcome }
        }
        throw LedgerError.unexpectedReply("the owner kept changing while applying entry \(entry.id)")
    }

    /// The owner: for a client's submission the authenticated submitter (with the token's order when it is
    /// theirs). For Apple's word (notifications, reconciliation, forwarded parts) first the user a purchase chain
    /// is already bound to — whoever was credited hears Apple's refund, revocation or renewal — then the
    /// `appAccountToken`'s order, else nobody yet (parked).
    package func resolveOwner(_ event: PurchaseEvent) async throws -> OwnerResolution {
        let tokens = event.transactions.compactMap(\.appAccountToken)
        if let user = event.userId, !user.isEmpty {
            if event.orderNo == nil {
                for token in tokens {
                    let found = try await tokenOwner(token)
                    if found?.user == user, let orderNo = found?.orderNo {
                        return .token(user: user, orderNo: orderNo, token: token)
                    }
                }
            }
            return .user(user)
        }
        for otid in originalTransactionIds(event) {
            if let user = try await redis.send(RedisCommand("GET", keys.binding(originalTransactionId: otid))).string {
                return .binding(user: user, originalTransactionId: otid)
            }
        }
        for token in tokens {
            if let found = try await tokenOwner(token) {
                return .token(user: found.user, orderNo: found.orderNo, token: token)
            }
        }
        return .unknown
    }

    private func tokenOwner(_ token: String) async throws -> (user: String, orderNo: String?)? {
        try await AccountToken.owner(of: token, keys: keys, on: redis)
    }

    private func originalTransactionIds(_ event: PurchaseEvent) -> [String] {
        var seen: Set<String> = []
        return (event.transactions.map(\.originalTransactionId) + event.renewals.map(\.originalTransactionId))
            .filter { seen.insert($0).inserted }
    }

    private func park(_ delivery: LedgerDelivery, entry: StreamEntry, stream: String) async throws -> LedgerOutcome {
        struct Note: Encodable {
            var type: String
            var subtype, uuid, app: String?
            var signed: Int64?
        }
        struct Body: Encodable {
            var jobId, kind, channel, event: String
            var now: Int64
            var retention: Int
            var forwarded: Bool
            var binds: [Int], tokens: [Int], parks: [Int]
            /// A V2 notification about no purchase: emitted on the events stream (`events`) instead of parked.
            var events: Int?
            var env: String?
            var note: Note?
        }
        let event = delivery.event
        var callKeys = [stream, keys.job(event.jobId)]
        func index(_ key: String) -> Int {
            callKeys.append(key)
            return callKeys.count
        }
        let otids = originalTransactionIds(event)
        var body = Body(
            jobId: event.jobId, kind: event.kind.rawValue, channel: keys.jobResultsChannel,
            event: try delivery.parkedJSON(entry: entry), now: now(),
            retention: JobStatus.retentionSeconds, forwarded: delivery.isForwarded,
            binds: otids.map { index(keys.binding(originalTransactionId: $0)) },
            tokens: event.transactions.compactMap(\.appAccountToken).map { index(keys.appAccountToken($0)) },
            parks: otids.map { index(keys.parked(originalTransactionId: $0)) })
        if otids.isEmpty, let note = event.notification, note.version >= 2 {
            body.events = index(keys.events().stream)
            body.env = event.environment
            body.note = Note(
                type: note.type, subtype: note.subtype, uuid: note.notificationUUID, app: note.appTransactionId,
                signed: note.signedDate)
        }
        return try await LedgerFunctions.call(
            "park", on: redis, keys: callKeys, group: group, id: entry.id,
            plan: Array(try JSONEncoder().encode(body)))
    }
}
