package import Core
import Foundation
package import Pipeline
package import Redis

/// Applies verified purchase events to the ledger: resolves the owner, then makes the one atomic
/// function call that acks the verified-stream entry and writes every effect (or parks the event while no
/// owner is known). Idempotent: replays, redeliveries and racing replicas change nothing twice.
package struct LedgerApplier: Sendable {
    package let redis: any RedisCommandExecutor
    package private(set) var catalog: Catalog
    package private(set) var keys: Keys
    /// The catalogs of the projects other than the default one (docs/PROJECTS.md); an event of a project without one
    /// is refused as malformed (dead-lettered, redrivable once the fulfiller knows the project).
    package var projectCatalogs: [ProjectID: Catalog] = [:]
    /// The verified stream's consumer group.
    package let group: String
    /// Clamp balances at 0 on refunds (`TOLLGATE_CLAMP_REFUNDS`), recording the shortfall.
    package let clampRefunds: Bool
    /// Milliseconds since 1970; entitlement states are computed at this time.
    package let now: @Sendable () -> Int64
    /// Replicas that must hold a cross-partition step before the step that depends on it runs on another primary.
    package var durability = Durability()
    /// How long an event a cross-partition claim moved back waits for the claiming submission to finish first, so
    /// that the buyer's own submission is the one that answers `applied` (with one partition the claim and the
    /// apply are one call, and this order needs no wait). The ledger is right in either order; after this long the
    /// event applies anyway, so a claimant that crashed delays it and loses nothing.
    package var claimantWait: Duration = .seconds(5)
    /// A second introductory free trial of a user and subscription group grants access, or not until its first paid
    /// period (`TOLLGATE_REPEAT_FREE_TRIAL`).
    package var repeatFreeTrial = RepeatFreeTrial.allow
    /// What each user's own event log keeps.
    package var userEventLog = UserEventLog()

    /// `WAIT` after each cross-partition step (`TOLLGATE_REDIS_WAIT_REPLICAS`): a claim before the apply that relies on
    /// it, a hand-over before the acknowledgement that drops the source entry. Without it a failover of the step's
    /// primary can lose the step while what depends on it, on another primary, survives: a lost binding would let a
    /// second user claim a purchase already credited, a lost hand-over would drop an event already acknowledged. With
    /// one partition every effect is in one call, which replicates as one unit, and nothing waits.
    package typealias Durability = RedisDurability

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

    /// Applies the event in `entry`, read from the verified stream of `partition` by this group. Re-resolves the
    /// owner when a binding appeared between the lookup and the call.
    ///
    /// With several partitions (``Keys/layout``) every call touches one slot, and ``route(_:entry:resolution:in:answered:)``
    /// takes every step across partitions: it hands the event over to the partition of its owner or of its purchase
    /// chains, or claims the owner's chains of other partitions before the apply call here.
    package func apply(entry: StreamEntry, partition: Partition = .first) async throws -> LedgerOutcome {
        let delivery = try LedgerDelivery(entry: entry)
        // Every key of the call, and the catalog, are the event's project's (placed by the verifier from the app Apple
        // signed): one project's purchase never touches another's ledger.
        let project = delivery.project
        guard project == keys.project else {
            guard let catalog = project.isDefault ? nil : projectCatalogs[project] else {
                throw LedgerError.malformedEvent("entry \(entry.id): project \(project) is not configured in this fulfiller")
            }
            var scoped = self
            scoped.keys = keys.inProject(project)
            scoped.catalog = catalog
            return try await scoped.apply(delivery, entry: entry, partition: partition)
        }
        return try await apply(delivery, entry: entry, partition: partition)
    }

    private func apply(_ delivery: LedgerDelivery, entry: StreamEntry, partition: Partition) async throws -> LedgerOutcome {
        var answered: [LedgerOutcome] = []
        for _ in 0..<4 {
            let resolution = try await resolveOwner(delivery.event)
            let outcome: LedgerOutcome
            switch try await route(delivery, entry: entry, resolution: resolution, in: partition, answered: answered) {
            case .apply(let owner, let remote):
                let plan = LedgerPlan(
                    delivery: delivery, owner: owner, resolution: resolution, catalog: catalog,
                    keys: keys, remote: remote, clamp: clampRefunds, repeatFreeTrial: repeatFreeTrial,
                    userEventLog: userEventLog, now: now())
                outcome = try await LedgerFunctions.call(
                    "apply", on: redis, keys: plan.keys, group: group, id: entry.id, plan: try plan.json())
                if let token = outcome.persist {
                    _ = try await redis.send(RedisCommand("PERSIST", key: keys.appAccountToken(token)))
                }
            case .park:
                outcome = try await park(delivery, entry: entry, partition: partition)
            case .handOver(let parts):
                outcome = try await handOver(delivery, entry: entry, from: partition, parts: parts)
            }
            if outcome.outcome != .reresolve { return outcome }
            answered.append(outcome)
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
            if let user = try await redis.send(RedisCommand("GET", key: keys.binding(originalTransactionId: otid))).string {
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

    func tokenOwner(_ token: String) async throws -> (user: String, orderNo: String?)? {
        try await AccountToken.owner(of: token, keys: keys, on: redis)
    }

    private func originalTransactionIds(_ event: PurchaseEvent) -> [String] {
        var seen: Set<String> = []
        return (event.transactions.map(\.originalTransactionId) + event.renewals.map(\.originalTransactionId))
            .filter { seen.insert($0).inserted }
    }

    /// Parks the event in `partition`, which holds its purchase chains (or the only one of them in this slot's
    /// reach, see ``chainPartitions(_:)``): token mappings live in other slots, so with several partitions they are
    /// not checked inside the call (a token's owner was read by ``resolveOwner(_:)`` just before; a mapping written
    /// since is an order the app's own submission will pay and claim, which moves the parked event on).
    private func park(_ delivery: LedgerDelivery, entry: StreamEntry, partition: Partition) async throws -> LedgerOutcome {
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
            /// The partition's app-level event sequence (hash) and its scope's name in the event (`app.p<N>`).
            var appSeq: Int?
            var scope: String?
            /// The project of a project other than the default one (its events say so).
            var project: String?
        }
        let event = delivery.event
        var callKeys = [keys.verified(partition: partition).stream, keys.job(event.jobId, partition: partition)]
        func index(_ key: String) -> Int {
            callKeys.append(key)
            return callKeys.count
        }
        let otids = originalTransactionIds(event).filter {
            keys.layout.isSingle || keys.partition(ofOriginalTransaction: $0) == partition
        }
        let tokens = keys.layout.isSingle ? event.transactions.compactMap(\.appAccountToken) : []
        var body = Body(
            jobId: event.jobId, kind: event.kind.rawValue, channel: keys.jobResultsChannel,
            event: try delivery.parkedJSON(entry: entry), now: now(),
            retention: JobStatus.retentionSeconds, forwarded: delivery.isForwarded,
            binds: otids.map { index(keys.binding(originalTransactionId: $0)) },
            tokens: tokens.map { index(keys.appAccountToken($0)) },
            parks: otids.map { index(keys.parked(originalTransactionId: $0)) })
        if otids.isEmpty, let note = event.notification, note.version >= 2 {
            body.events = index(keys.events(partition: partition).stream)
            body.env = event.environment
            body.appSeq = index(keys.appEventSequence(partition: partition))
            body.scope = (keys.project.label.map { "\($0)/" } ?? "") + "app.p\(partition)"
            body.project = keys.project.label
            body.note = Note(
                type: note.type, subtype: note.subtype, uuid: note.notificationUUID, app: note.appTransactionId,
                signed: note.signedDate)
        }
        return try await LedgerFunctions.call(
            "park", on: redis, keys: callKeys, group: group, id: entry.id,
            plan: Array(try JSONEncoder().encode(body)))
    }
}
