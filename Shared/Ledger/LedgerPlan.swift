import Core
import Foundation
import Pipeline

/// The `KEYS` and the plan JSON of one `ledger_v8_apply` call: an event's transactions with what the
/// catalog says about them, for one owner. The plan refers to keys by their 1-based index in ``keys``.
struct LedgerPlan {
    private(set) var keys: [String]
    private(set) var body: Body

    /// The fixed keys, in the order the function expects them: all in the owner's partition `K`
    /// (``Keys/partition(ofUser:)``). A purchase chain, token or order in another slot enters as what `remote`
    /// says about it, never as a key. The user-ledger keys are those of the delivery's side (``LedgerSide``).
    init(
        delivery: LedgerDelivery, owner: String, resolution: OwnerResolution, catalog: Catalog, keys unsided: Keys,
        remote: RemoteFacts, clamp: Bool, repeatFreeTrial: RepeatFreeTrial = .allow,
        userEventLog: UserEventLog = UserEventLog(), now: Int64
    ) {
        let event = delivery.event
        let k = unsided.on(delivery.side)
        let partition = k.partition(ofUser: owner)
        keys = [
            k.verified(partition: partition).stream, k.job(event.jobId, partition: partition),
            k.events(partition: partition).stream, k.account(user: owner), k.ledgerMeta(user: owner),
            k.transactions(user: owner), k.notifications(user: owner),
        ]
        body = Body(
            jobId: event.jobId, kind: event.kind.rawValue, user: owner, env: event.environment,
            channel: k.jobResultsChannel, now: now, verifiedAt: event.verifiedAt,
            retention: JobStatus.retentionSeconds, clamp: clamp, by: "user",
            claim: delivery.isClientClaim, forwarded: delivery.isForwarded, hops: delivery.hops)
        body.unparked = remote.unparked
        body.side = delivery.side.label
        body.project = unsided.project.label
        if repeatFreeTrial == .refuse { body.trials = RepeatFreeTrial.refuse.rawValue }
        body.apple = event.apple.flatMap { $0.utf8.count <= 65_536 ? $0 : nil }
        body.ulog = index(k.userEvents(user: owner))
        body.ulogCap = userEventLog.cap
        body.ulogTtl = userEventLog.retentionSeconds
        switch resolution {
        case .token(_, let orderNo, let token):
            body.by = "token"
            if k.layout.isSingle { body.byKey = index(k.appAccountToken(token)) }
            if let orderNo { addOrder(orderNo, owner: owner, keys: k) }
        case .binding(_, let otid):
            body.by = "binding"
            if remote.isLocal(otid) { body.byKey = index(k.binding(originalTransactionId: otid)) }
        case .user, .unknown:
            break
        }
        if let orderNo = event.orderNo, body.order == nil, delivery.isClientClaim {
            addOrder(orderNo, owner: owner, keys: k)
            body.explicit = true
        }
        if let note = event.notification {
            body.note = Note(
                type: note.type, uuid: note.notificationUUID, signed: note.signedDate,
                evidence: note.version >= 2)
        }
        var entByOTID: [String: Int] = [:]
        for tx in event.transactions {
            let product = catalog.product(tx.productId)
            let local = remote.isLocal(tx.originalTransactionId)
            let token = tx.appAccountToken.flatMap { remote.tokens[$0.lowercased()] }
            var ent: Int?
            if let product, let name = product.entitlement, product.type != .consumable {
                ent = entitlementIndex(name: name, product: product, user: owner, keys: k)
                entByOTID[tx.originalTransactionId] = ent
            }
            body.txs.append(
                Tx(
                    tid: tx.transactionId, otid: tx.originalTransactionId, product: tx.productId,
                    type: product?.type.rawValue ?? "unknown", coins: product?.coins ?? 0, qty: tx.quantity,
                    ent: ent, purchase: tx.purchaseDate, expires: tx.expiresDate, revoked: tx.revocationDate,
                    signed: tx.signedDate, family: tx.inAppOwnershipType == "FAMILY_SHARED", upgraded: tx.isUpgraded ?? false,
                    aat: tx.appAccountToken?.lowercased(),
                    rec: index(k.transaction(user: owner, transactionId: tx.transactionId)),
                    txo: index(k.transactionOwner(partition: k.partition(ofUser: owner), transactionId: tx.transactionId)),
                    bind: local ? index(k.binding(originalTransactionId: tx.originalTransactionId)) : nil,
                    park: local ? index(k.parked(originalTransactionId: tx.originalTransactionId)) : nil,
                    owner: local ? nil : remote.owners[tx.originalTransactionId],
                    aatKey: k.layout.isSingle ? tx.appAccountToken.map { index(k.appAccountToken($0)) } : nil,
                    towner: token?.user, torder: token?.orderNo,
                    rtype: tx.revocationType,
                    rpct: tx.revocationPercentage.flatMap { (0...100_000).contains($0) ? $0 : nil },
                    price: tx.price.flatMap { $0 >= 0 ? $0 : nil }, cur: tx.currency.flatMap(Self.short),
                    sf: tx.storefront.flatMap(Self.short), otype: tx.offerType,
                    oid: tx.offerIdentifier.flatMap { $0.utf8.count <= 128 ? $0 : nil }))
            addOffer(tx, product: product, token: token, owner: owner, keys: k)
        }
        for renewal in event.renewals {
            var ent = entByOTID[renewal.originalTransactionId]
            if ent == nil, let product = renewal.productId.flatMap(catalog.product), product.type == .autoRenewable,
                let name = product.entitlement
            {
                ent = entitlementIndex(name: name, product: product, user: owner, keys: k)
            }
            guard let ent, body.ents[ent - 1].type == Product.Kind.autoRenewable.rawValue else { continue }
            body.renewals.append(
                Renewal(
                    ent: ent, otid: renewal.originalTransactionId,
                    bind: remote.isLocal(renewal.originalTransactionId)
                        ? index(k.binding(originalTransactionId: renewal.originalTransactionId)) : nil,
                    bound: remote.isLocal(renewal.originalTransactionId)
                        ? nil : remote.owners[renewal.originalTransactionId].map { UserID.same($0, owner) } ?? false,
                    auto: renewal.autoRenewStatus,
                    retry: renewal.isInBillingRetryPeriod ?? false, grace: renewal.gracePeriodExpiresDate,
                    signed: renewal.signedDate, aprod: renewal.autoRenewProductId.flatMap { $0.utf8.count <= 128 ? $0 : nil },
                    intent: renewal.expirationIntent.flatMap { (0...1000).contains($0) ? $0 : nil },
                    winback: renewal.eligibleWinBackOfferIds.map(Self.offerList)))
        }
        addSweepIndex(keys: k)
    }

    /// Win-back offer ids as the ledger keeps them: comma-joined, only ids of 1–64 letters, digits, `.`, `-`, `_`, at
    /// most 20.
    static func offerList(_ ids: [String]) -> String {
        ids.filter { PlainIdentifier.isValid($0) }.prefix(20).joined(separator: ",")
    }

    /// A short code Apple states (currency, storefront) as the ledger keeps it: at most 16 bytes, else nothing.
    private static func short(_ code: String) -> String? { code.utf8.count <= 16 ? code : nil }

    /// What the apply call needs to know about the offer `tx` was bought with (the last transaction of the plan): a
    /// promotional redemption's identifier and the order of the owner its token maps to (read before the call, see
    /// ``RemoteFacts/tokens``: a mapping is written once), and an introductory offer period with its group.
    private mutating func addOffer(
        _ tx: PurchaseEventTransaction, product: Product?, token: (user: String, orderNo: String?)?, owner: String,
        keys k: Keys
    ) {
        let last = body.txs.count - 1
        guard last >= 0 else { return }
        switch tx.offerType {
        case 2:
            // Longer than any offer identifier the catalog accepts: kept as unmatchable, never as a bad plan.
            let offer = tx.offerIdentifier ?? ""
            body.txs[last].offer = offer.utf8.count <= 128 ? offer : "?"
            if let token, UserID.same(token.user, owner), let orderNo = token.orderNo {
                body.txs[last].osig = index(k.order(user: owner, orderNo: orderNo))
            }
        case 1 where tx.inAppOwnershipType != "FAMILY_SHARED":
            guard let group = product?.group else { return }
            body.txs[last].group = group
            body.txs[last].intro = true
            if tx.offerDiscountType == "FREE_TRIAL" { body.txs[last].trial = true }
        default:
            break
        }
    }

    /// The order the event may pay, and the owner's index of unpaid orders.
    private mutating func addOrder(_ orderNo: String, owner: String, keys k: Keys) {
        body.order = index(k.order(user: owner, orderNo: orderNo))
        body.orderNo = orderNo
        body.pending = index(k.pendingOrders(user: owner))
    }

    /// Adds the reconciler's sweep index keys (``Keys/subscriptionsDue``) once an auto-renewable entitlement
    /// is in the plan: the owner's partition's, which the call already touches.
    private mutating func addSweepIndex(keys k: Keys) {
        guard body.due == nil, body.ents.contains(where: { $0.type == Product.Kind.autoRenewable.rawValue }) else { return }
        body.due = index(k.subscriptionsDue(partition: k.partition(ofUser: body.user)))
        body.dueRef = index(k.subscriptionsDueReference(partition: k.partition(ofUser: body.user)))
    }

    /// The 1-based position of an entitlement in the plan (added once).
    private mutating func entitlementIndex(name: String, product: Product, user: String, keys k: Keys) -> Int {
        if let found = body.ents.firstIndex(where: { $0.name == name }) { return found + 1 }
        body.ents.append(
            Ent(
                name: name, type: product.type.rawValue, days: product.durationDays ?? 0,
                key: index(k.entitlement(user: user, name: name))))
        return body.ents.count
    }

    /// The 1-based `KEYS` index of `key` (each key passed once).
    private mutating func index(_ key: String) -> Int {
        if let found = keys.firstIndex(of: key) { return found + 1 }
        keys.append(key)
        return keys.count
    }
}

/// What the fulfiller learned outside the apply call about keys in other slots (N partitions): the owners of the
/// purchase chains of other partitions (claimed, or read), and the token mappings. All of them are written once
/// (a binding with `SET NX`, a mapping with its order), so what was read still holds when the call runs.
struct RemoteFacts {
    /// The owner's partition, the slot of the call.
    var partition: Partition
    var keys: Keys
    /// Owners of chains outside `partition`, by originalTransactionId.
    var owners: [String: String] = [:]
    /// Token mappings (lower-case token → user and order), read when the layout has several partitions, and (any
    /// layout) for the tokens of promotional offer redemptions, whose order records the signature.
    var tokens: [String: (user: String, orderNo: String?)] = [:]
    /// Parked events the claims moved back onto their partitions' verified streams.
    var unparked = 0

    /// Whether the chain's keys are in the call's slot (always, with one partition).
    func isLocal(_ originalTransactionId: String) -> Bool {
        keys.layout.isSingle || keys.partition(ofOriginalTransaction: originalTransactionId) == partition
    }
}
