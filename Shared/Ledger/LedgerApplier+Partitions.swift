import Foundation
import Pipeline
import Redis

/// The cross-partition steps of ``LedgerApplier`` (N partitions; docs/CLUSTER.md §5): claiming a purchase
/// chain's owner in the chain's partition, handing an event (or one part per partition) over to another partition,
/// and the replica acknowledgement each such step waits for before a step on another primary relies on it. The
/// crash-at-every-step reasoning is in docs/CLUSTER.md §7 (and `Services/Fulfiller/README.md`, "Partitions").
extension LedgerApplier {
    /// Where the event read from `partition` goes, and the one entry point to the steps across partitions: to the
    /// apply call here when its owner lives here (after the claimant an unparked event waits for,
    /// ``awaitClaimant(_:of:partition:)``, with the owner's purchase chains of other partitions claimed,
    /// ``remoteFacts(_:owner:claimAll:)``); handed over to its owner's partition, or to its purchase chains' (one part
    /// per partition), when that is another one; else parked here. With one partition it is always the apply call
    /// or the park, and nothing crosses. `answered`: what earlier calls for this entry answered (`reresolve`), one
    /// of them with `claim` when the apply call would credit a chain of another partition after all.
    func route(
        _ delivery: LedgerDelivery, entry: StreamEntry, resolution: OwnerResolution, in partition: Partition,
        answered: [LedgerOutcome]
    ) async throws -> Route {
        if let owner = resolution.user {
            let home = keys.partition(ofUser: owner)
            guard home == partition else { return .handOver([(home, nil)]) }
            try await awaitClaimant(entry, of: delivery, partition: partition)
            let claimAll = answered.contains { $0.claim == true }
            return .apply(owner: owner, remote: try await remoteFacts(delivery, owner: owner, claimAll: claimAll))
        }
        if let parts = chainPartitions(delivery.event), parts != [partition] {
            return .handOver(parts.count == 1 ? [(parts[0], nil)] : splitByChain(delivery.event, parts))
        }
        return .park
    }

    /// What ``route(_:entry:resolution:in:answered:)`` decided.
    enum Route {
        /// The apply call in this partition, the owner's, with what it needs from other slots.
        case apply(owner: String, remote: RemoteFacts)
        /// Parked in this partition, its purchase chain's.
        case park
        /// Handed to other partitions: the whole entry (no transaction ids) or one part per partition.
        case handOver([(Partition, [String]?)])
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
    func remoteFacts(_ delivery: LedgerDelivery, owner: String, claimAll: Bool) async throws -> RemoteFacts {
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
    func orderRefusesClaim(_ delivery: LedgerDelivery, owner: String) async throws -> Bool {
        guard delivery.isClientClaim, let orderNo = delivery.event.orderNo else { return false }
        let reply = try await redis.send(RedisCommand("HGET", key: keys.order(user: owner, orderNo: orderNo), Order.Field.product))
        guard let product = reply.string else { return true }
        return !delivery.event.transactions.contains { $0.productId == product }
    }

    /// Claims the purchase chain `otid` for `user` in its partition (first owner wins); returns its owner and how many
    /// parked events a new binding moved back onto that partition's verified stream. Those events name `job` (the
    /// claiming submission) in ``LedgerDelivery/Field/after`` and wait for it (``awaitClaimant(_:of:partition:)``).
    package func claim(_ otid: String, for user: String, job: String? = nil) async throws -> (owner: String, unparked: Int) {
        let partition = keys.partition(ofOriginalTransaction: otid)
        let reply = try await durably(
            "claim",
            keys: [
                keys.verified(partition: partition).stream, keys.binding(originalTransactionId: otid),
                keys.parked(originalTransactionId: otid),
            ],
            arguments: [Array(user.utf8)] + (job.map { [Array($0.utf8)] } ?? []))
        struct Claimed: Decodable {
            var owner: String
            var unparked: Int
        }
        guard let bytes = reply.bytes, let claimed = try? JSONDecoder().decode(Claimed.self, from: Data(bytes)) else {
            throw LedgerError.unexpectedReply("claim of \(otid) returned \(reply)")
        }
        return (claimed.owner, claimed.unparked)
    }

    /// Before an event a claim moved back applies in its owner's partition: waits, up to ``claimantWait``, until the
    /// claiming job (``LedgerDelivery/Field/after``; its hash is in this partition, the submitter's) has finished.
    /// The claim moves parked events before the claimant's own apply call; without this wait Apple's notification
    /// could be credited first and the buyer's submission would answer `duplicate` for the purchase it just made.
    /// Nothing depends on the wait for correctness: a job that is gone or never finishes only delays the event.
    func awaitClaimant(_ entry: StreamEntry, of delivery: LedgerDelivery, partition: Partition) async throws {
        guard let claimant = entry.string(LedgerDelivery.Field.after), claimant != delivery.event.jobId else { return }
        let key = keys.job(claimant, partition: partition)
        let deadline = ContinuousClock.now + claimantWait
        var pause = Duration.milliseconds(2)
        while ContinuousClock.now < deadline {
            let state = try await redis.send(RedisCommand("HGET", key: key, "state")).string
            guard let state, let known = JobState(rawValue: state), !known.isFinal else { return }
            try await Task.sleep(for: min(pause, deadline - ContinuousClock.now))  // cancelled: the entry stays pending
            pause = min(pause * 2, .milliseconds(100))
        }
    }

    func binding(of otid: String) async throws -> String? {
        try await redis.send(RedisCommand("GET", key: keys.binding(originalTransactionId: otid))).string
    }

    /// The partitions of the event's purchase chains, in first-seen order: its transactions' (else its renewals'
    /// first one); nil when it names none. Always `[0]` with one partition.
    func chainPartitions(_ event: PurchaseEvent) -> [Partition]? {
        let otids =
            event.transactions.isEmpty
            ? Array(event.renewals.prefix(1).map(\.originalTransactionId)) : event.transactions.map(\.originalTransactionId)
        guard !otids.isEmpty else { return nil }
        var seen: Set<Partition> = []
        return otids.map { keys.partition(ofOriginalTransaction: $0) }.filter { seen.insert($0).inserted }
    }

    /// One part per partition: the transactions whose chains live there.
    func splitByChain(_ event: PurchaseEvent, _ partitions: [Partition]) -> [(Partition, [String]?)] {
        partitions.map { partition in
            (
                partition,
                event.transactions.filter { keys.partition(ofOriginalTransaction: $0.originalTransactionId) == partition }.map(
                    \.transactionId)
            )
        }
    }

    /// Hands the entry (`only` nil) or parts of it (`only`: their transaction ids) to other partitions' verified
    /// streams, once each however often this runs (a marker per source entry and target, `tg:{K}:fwd:<from>:<id>`),
    /// then acknowledges the entry, recording where its job's status continues.
    ///
    /// Crash between the two steps: the entry is delivered again, the markers stop a second copy, and the
    /// acknowledgement follows. Two consumers on the same entry: the same, and one of them gets `acked_elsewhere`.
    func handOver(
        _ delivery: LedgerDelivery, entry: StreamEntry, from source: Partition, parts: [(Partition, [String]?)]
    ) async throws -> LedgerOutcome {
        let moves = (entry.string(LedgerDelivery.Field.moves).flatMap { Int($0) } ?? 0) + 1
        guard moves <= LedgerDelivery.maximumMoves else {
            throw LedgerError.malformedEvent("entry \(entry.id) was handed between partitions \(moves) times")
        }
        let kept = entry.fields.filter { name, _ in
            !name.hasPrefix("pipeline.") && name != LedgerDelivery.Field.moves && name != LedgerDelivery.Field.from
        }
        for (target, only) in parts {
            var fields = kept
            fields[LedgerDelivery.Field.moves] = Array(String(moves).utf8)
            fields[LedgerDelivery.Field.from] = Array(source.description.utf8)
            if let only {
                fields[LedgerDelivery.Field.only] = Array(try JSONEncoder().encode(only))
                fields[LedgerDelivery.Field.hops] = Array(String(delivery.hops + 1).utf8)
            }
            var arguments: [[UInt8]] = [Array(String(Self.handOverMarkerSeconds).utf8)]
            for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
                arguments.append(Array(name.utf8))
                arguments.append(value)
            }
            _ = try await durably(
                "hand_over",
                keys: [keys.verified(partition: target).stream, keys.partitionKey(target, "fwd", source.description, entry.id)],
                arguments: arguments)
        }
        struct Plan: Encodable {
            var jobId, kind, channel: String
            var now: Int64
            var retention: Int
            var forwarded: Bool
            var to: Int?
        }
        let event = delivery.event
        let plan = Plan(
            jobId: event.jobId, kind: event.kind.rawValue, channel: keys.jobResultsChannel, now: now(),
            retention: JobStatus.retentionSeconds, forwarded: delivery.isForwarded,
            to: parts.count == 1 && parts[0].1 == nil ? parts[0].0.index : nil)
        return try await LedgerFunctions.call(
            "handed_over", on: redis,
            keys: [keys.verified(partition: source).stream, keys.job(event.jobId, partition: source)],
            group: group, id: entry.id, plan: Array(try JSONEncoder().encode(plan)))
    }

    /// Calls a cross-partition step of the ledger library and, with ``durability``, waits for its replicas (one
    /// pipeline: the `WAIT` covers the call's connection, on the step's primary), through the library's one way of
    /// calling durably and recovering a lost library.
    /// - Throws: ``LedgerError/replicationTimeout(_:)`` when fewer replicas acknowledged it in time.
    func durably(_ function: String, keys callKeys: [String], arguments: [[UInt8]]) async throws -> RedisReply {
        let library = LedgerFunctions.library
        let (replies, replicas) = try await library.pipeline(
            [library.command(function, keys: callKeys.map { Array($0.utf8) }, arguments: arguments)], on: redis,
            durability: durability)
        guard let reply = replies.first else { throw LedgerError.unexpectedReply("\(function) returned nothing") }
        if case .error(let text) = reply {
            throw LedgerError.unexpectedReply("\(library.function(function)) failed: \(text)")
        }
        guard durability.isMet(by: replicas) else {
            throw LedgerError.replicationTimeout(
                "\(function) reached \(replicas ?? 0) of \(durability.replicas) replicas in \(durability.timeoutMilliseconds) ms")
        }
        return reply
    }

    /// How long a hand-over marker is kept: longer than any entry stays pending (the reclaim and retry bounds).
    static let handOverMarkerSeconds = 7 * 24 * 3600
}
