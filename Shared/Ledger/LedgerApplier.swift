import Core
import Foundation
import Pipeline
import Redis

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
    /// With several partitions (``Keys/layout``) every call touches one slot: an event whose owner lives in another
    /// partition is handed over to it (``handOver(_:entry:from:parts:)``); one whose owner is unknown is parked in
    /// its purchase chain's partition (handed there first when it is not this one); and the owner's chains in other
    /// partitions are claimed (``claim(_:for:)``) before the apply call in the owner's partition.
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
        var claimAll = false
        for _ in 0..<4 {
            let resolution = try await resolveOwner(delivery.event)
            let outcome: LedgerOutcome
            if let owner = resolution.user {
                let home = keys.partition(ofUser: owner)
                if home != partition {
                    outcome = try await handOver(delivery, entry: entry, from: partition, parts: [(home, nil)])
                } else {
                    try await awaitClaimant(entry, of: delivery, partition: partition)
                    let remote = try await remoteFacts(delivery, owner: owner, claimAll: claimAll)
                    let plan = LedgerPlan(
                        delivery: delivery, owner: owner, resolution: resolution, catalog: catalog,
                        keys: keys, remote: remote, clamp: clampRefunds, repeatFreeTrial: repeatFreeTrial,
                        userEventLog: userEventLog, now: now())
                    outcome = try await LedgerFunctions.call(
                        "apply", on: redis, keys: plan.keys, group: group, id: entry.id, plan: try plan.json())
                    if let token = outcome.persist {
                        _ = try await redis.send(RedisCommand("PERSIST", keys.appAccountToken(token)))
                    }
                }
            } else if let parts = chainPartitions(delivery.event), parts != [partition] {
                outcome = try await handOver(
                    delivery, entry: entry, from: partition,
                    parts: parts.count == 1 ? [(parts[0], nil)] : splitByChain(delivery.event, parts))
            } else {
                outcome = try await park(delivery, entry: entry, partition: partition)
            }
            if outcome.outcome != .reresolve { return outcome }
            claimAll = claimAll || outcome.claim == true
        }
        throw LedgerError.unexpectedReply("the owner kept changing while applying entry \(entry.id)")
    }

    /// What the apply call in the owner's partition needs to know about other slots: each of its transactions'
    /// purchase chains in another partition claimed for `owner` (``claim(_:for:)``: first owner wins), the owners
    /// of its renewals' chains, and its tokens' mappings.
    ///
    /// A client's claim naming an order that cannot be paid by it (unknown, or of another product) is rejected by
    /// the apply call, which then binds nothing: its chains are not claimed either, unless `claimAll` (the call
    /// answered that it would credit after all). A transaction bought with another user's token is that user's:
    /// it is forwarded to them, never claimed here. With one partition only the token mappings of promotional offer
    /// redemptions are read (their order records ingest's signature, ``LedgerPlan/Tx/osig``).
    private func remoteFacts(_ delivery: LedgerDelivery, owner: String, claimAll: Bool) async throws -> RemoteFacts {
        let home = keys.partition(ofUser: owner)
        var facts = RemoteFacts(partition: home, keys: keys)
        let event = delivery.event
        // Any layout: a promotional redemption is matched to its signature through its token's order.
        let tokens = event.transactions.filter { keys.layout.isSingle ? $0.offerType == 2 : true }
        for token in Set(tokens.compactMap { $0.appAccountToken?.lowercased() }) {
            if let found = try await tokenOwner(token) { facts.tokens[token] = found }
        }
        guard !keys.layout.isSingle else { return facts }
        var claims = claimAll
        if !claims { claims = try await !orderRefusesClaim(delivery, owner: owner) }
        for tx in event.transactions where !facts.isLocal(tx.originalTransactionId) {
            let otid = tx.originalTransactionId
            guard facts.owners[otid] == nil else { continue }
            if let bound = try await binding(of: otid) {
                facts.owners[otid] = bound
            } else if claims, tx.appAccountToken.flatMap({ facts.tokens[$0.lowercased()] }).map({ UserID.same($0.user, owner) }) ?? true {
                let claimed = try await claim(otid, for: owner, job: event.jobId)
                facts.owners[otid] = claimed.owner
                facts.unparked += claimed.unparked
            }
        }
        for renewal in event.renewals where !facts.isLocal(renewal.originalTransactionId) {
            let otid = renewal.originalTransactionId
            if facts.owners[otid] == nil, let bound = try await binding(of: otid) { facts.owners[otid] = bound }
        }
        return facts
    }

    /// Whether the apply call will reject a client's claim because of its order (the order rules of
    /// docs/ARCHITECTURE.md, invariant 3, that need no binding: the named order does not exist, or no transaction is of
    /// its product).
    private func orderRefusesClaim(_ delivery: LedgerDelivery, owner: String) async throws -> Bool {
        guard delivery.isClientClaim, let orderNo = delivery.event.orderNo else { return false }
        let reply = try await redis.send(RedisCommand("HGET", keys.order(user: owner, orderNo: orderNo), Order.Field.product))
        guard let product = reply.string else { return true }
        return !delivery.event.transactions.contains { $0.productId == product }
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
