import Foundation
import Ledger
import Pipeline
import Redis
import Synchronization
import TestSupport
import Testing

/// The ledger on sixteen partitions (each command through ``CheckedExecutor`` (``CheckedExecutor/Checks/sameSlot``), so every call is one slot): the
/// cross-partition steps — claiming a purchase chain, handing an event to its owner's or chain's partition — and a
/// crash after each of them (Services/Fulfiller/README.md, "Partitions").
@Suite struct LedgerPartitionTests {
    static let partitions = 16

    /// A user id whose ledger lives in `partition`.
    static func user(in partition: Partition, _ keys: Keys, _ name: String = "user") -> String {
        (0...).lazy.map { "\(name)-\($0)" }.first { keys.partition(ofUser: $0) == partition } ?? name
    }

    /// An originalTransactionId whose chain lives outside `partition` (and, with `in`, in that one).
    static func chain(notIn partition: Partition, in wanted: Partition? = nil, _ keys: Keys, from start: Int = 2_000_000) -> String {
        (start...).lazy.map { String($0) }.first {
            let p = keys.partition(ofOriginalTransaction: $0)
            return p != partition && (wanted == nil || p == wanted)
        } ?? "0"
    }

    /// The entries of a partition's verified stream.
    static func entries(_ h: LedgerHarness, partition: Partition) async throws -> [StreamEntry] {
        try await h.redis.xrange(h.keys.verified(partition: partition).stream)
    }

    /// An applier whose Redis "crashes" right after the named ledger function ran: the call reaches Redis and runs,
    /// then the caller sees ``RedisError/unknownOutcome(_:)``, as a fulfiller killed at that point would leave it.
    static func crashing(after function: String, _ h: LedgerHarness) -> LedgerApplier {
        LedgerApplier(
            redis: CrashAfterFunction(base: h.redis, function: LedgerFunctions.library.function(function)),
            catalog: testCatalog, keys: h.keys, group: LedgerHarness.group, clampRefunds: false, now: { testNow })
    }

    /// Apple's notification about a purchase (job `jobNote`), parked in its chain's partition; then the buyer's
    /// submission of it (job `jobBuy`, its hash `verifying` as ingest and the verifier leave it), read from the
    /// buyer's partition `buyerIn`, which is not the chain's.
    static func purchaseAfterAParkedNotification(
        _ h: LedgerHarness, buyerIn partition: Partition
    ) async throws -> (buyer: String, otid: String, purchase: LedgerHarness.Read) {
        let buyer = user(in: partition, h.keys)
        let otid = chain(notIn: partition, h.keys)
        let note = Fixture.notification("ONE_TIME_CHARGE", [Fixture.transaction(otid, product: "coins100")], job: "jobNote")
        #expect(try await h.deliver(note).outcome == .parked)
        _ = try await h.redis.send("HSET", h.keys.job("jobBuy", partition: partition), "state", "verifying")
        try await h.submit(Fixture.client(buyer, [Fixture.transaction(otid, product: "coins100")], job: "jobBuy"))
        return (buyer, otid, try #require(try await h.read().first))
    }

    /// Applies every read at once, each on its own task.
    static func applyConcurrently(_ reads: [LedgerHarness.Read], _ h: LedgerHarness) async throws -> [LedgerOutcome] {
        try await withThrowingTaskGroup(of: LedgerOutcome.self) { group in
            for read in reads { group.addTask { try await h.apply(read) } }
            var outcomes: [LedgerOutcome] = []
            for try await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
    }

    @Test func aCrashAfterTheHandOverLeavesOneCopyAndItsRetryAcknowledges() async throws {
        try await LedgerHarness.with(partitions: Self.partitions) { h in
            let alice = Self.user(in: 3, h.keys)
            let otid = Self.chain(notIn: 3, h.keys)
            let chainPartition = h.keys.partition(ofOriginalTransaction: otid)
            let bought = try await h.deliver(Fixture.client(alice, [Fixture.transaction(otid, product: "coins100")]))
            #expect(bought.outcome == .fulfilled)
            #expect(try await h.coins(alice) == 100)

            // Apple's refund starts in the chain's partition; its owner's ledger is in partition 3.
            let refund = Fixture.notification(
                "REFUND", [Fixture.transaction(otid, product: "coins100", revoked: testNow)], job: "jobRefund")
            try await h.submit(refund)
            let read = try #require(try await h.read().first)
            #expect(read.partition == chainPartition)
            await #expect(throws: RedisError.self) {
                try await Self.crashing(after: "hand_over", h).apply(entry: read.entry, partition: read.partition)
            }
            #expect(try await Self.entries(h, partition: 3).filter { $0.string(LedgerDelivery.Field.from) != nil }.count == 1)
            #expect(try await h.coins(alice) == 100, "nothing is applied before the owner's partition handles it")

            // Delivered again: the marker stops a second copy, and the acknowledgement follows.
            #expect(try await h.apply(read).outcome == .forwarded)
            #expect(try await h.apply(read).outcome == .ackedElsewhere)
            let handedOver = try await Self.entries(h, partition: 3).filter { $0.string(LedgerDelivery.Field.from) != nil }
            #expect(handedOver.count == 1)
            #expect(handedOver.first?.string(LedgerDelivery.Field.from) == chainPartition.description)
            #expect(
                try await h.hash(h.keys.job("jobRefund", partition: chainPartition))["moved.to"] == nil,
                "a job ingest never wrote keeps no hash")

            let outcomes = try await h.drain()
            #expect(outcomes.map(\.outcome) == [.fulfilled])
            #expect(outcomes.first?.transactions?.map(\.result) == ["refunded"])
            #expect(try await h.coins(alice) == 0)
            #expect(try await h.job("jobRefund")?.state == .fulfilled)
            #expect(try await h.pendingCount() == 0)
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    @Test func theJobOfAHandedOverEventRecordsWhereItsStatusContinues() async throws {
        try await LedgerHarness.with(partitions: Self.partitions) { h in
            let alice = Self.user(in: 5, h.keys)
            let otid = Self.chain(notIn: 5, h.keys)
            let chainPartition = h.keys.partition(ofOriginalTransaction: otid)
            try await h.deliver(Fixture.client(alice, [Fixture.transaction(otid, product: "vip.month", expires: testNow + day)]))
            // Ingest wrote the notification's job hash in the chain's partition.
            _ = try await h.redis.send("HSET", h.keys.job("jobRenew", partition: chainPartition), "state", "verified")
            let renew = Fixture.notification(
                "DID_RENEW",
                [Fixture.transaction("\(otid)-2", product: "vip.month", otid: otid, purchase: testNow, expires: testNow + 31 * day)],
                job: "jobRenew")
            let outcome = try await h.deliver(renew)
            #expect(outcome.outcome == .fulfilled)
            #expect(try await h.hash(h.keys.job("jobRenew", partition: chainPartition))["moved.to"] == "5")
            #expect(try await h.hash(h.keys.job("jobRenew", partition: 5))["state"] == "fulfilled")
            #expect(try await h.hash(h.keys.account(user: alice))["ent:vip:expires"] == String(testNow + 31 * day))
        }
    }

    @Test func aCrashAfterAClaimBindsTheClaimantAndItsRetryCreditsOnce() async throws {
        try await LedgerHarness.with(partitions: Self.partitions) { h in
            let alice = Self.user(in: 7, h.keys)
            let otid = Self.chain(notIn: 7, h.keys)
            try await h.submit(Fixture.client(alice, [Fixture.transaction(otid, product: "coins100")]))
            let read = try #require(try await h.read().first)
            await #expect(throws: RedisError.self) {
                try await Self.crashing(after: "claim", h).apply(entry: read.entry, partition: read.partition)
            }
            #expect(try await h.redis.send("GET", h.keys.binding(originalTransactionId: otid)).string == alice)
            #expect(try await h.coins(alice) == 0)

            // Another user's claim of the same purchase now loses, crash or no crash.
            let eve = Self.user(in: 7, h.keys, "eve")
            let stolen = try await h.deliver(Fixture.client(eve, [Fixture.transaction(otid, product: "coins100")]))
            #expect(stolen.outcome == .rejected && stolen.reason == "owned_by_another_user", "\(stolen)")

            #expect(try await h.apply(read).outcome == .fulfilled)
            #expect(try await h.apply(read).outcome == .ackedElsewhere)
            #expect(try await h.coins(alice) == 100)
            #expect(try await h.coins(eve) == 0)
            _ = try await h.drain()
            #expect(try await h.coins(alice) == 100)
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    /// A claim replayed after a crash (or lost to an earlier owner) writes the binding again, unchanged: `WAIT` counts
    /// only the calling connection's writes, so a replay that wrote nothing would not wait for the binding to reach
    /// a replica before another primary credits on its strength.
    @Test func aReplayedClaimIsAWriteSoItsWaitCoversTheBinding() async throws {
        try await LedgerHarness.with(partitions: Self.partitions) { h in
            let otid = Self.chain(notIn: 7, h.keys)
            #expect(try await h.applier.claim(otid, for: "alice").owner == "alice")
            let before = try await Self.writesMade(h)
            #expect(try await h.applier.claim(otid, for: "alice").owner == "alice")
            let afterReplay = try await Self.writesMade(h)
            #expect(afterReplay > before, "the replay replicated a write (\(before) → \(afterReplay))")
            #expect(try await h.applier.claim(otid, for: "eve").owner == "alice", "first owner wins")
            #expect(try await Self.writesMade(h) > afterReplay)
            #expect(try await h.redis.send("GET", h.keys.binding(originalTransactionId: otid)).string == "alice")
            #expect(try await h.redis.send("TTL", h.keys.binding(originalTransactionId: otid)).int == -1)
        }
    }

    /// Writes the server has made (what it would replicate): `rdb_changes_since_last_save`, which every write,
    /// even of an unchanged value, raises.
    static func writesMade(_ h: LedgerHarness) async throws -> Int {
        let info = try await h.redis.send("INFO", "persistence").string ?? ""
        let field = "rdb_changes_since_last_save:"
        let line = info.split(whereSeparator: \.isNewline).first { $0.hasPrefix(field) }
        return try #require(line.flatMap { Int($0.dropFirst(field.count)) })
    }

    @Test func aCrashAfterTheApplyCreditsOnce() async throws {
        try await LedgerHarness.with(partitions: Self.partitions) { h in
            let alice = Self.user(in: 9, h.keys)
            let otid = Self.chain(notIn: 9, h.keys)
            try await h.submit(Fixture.client(alice, [Fixture.transaction(otid, product: "coins2000", quantity: 2)]))
            let read = try #require(try await h.read().first)
            await #expect(throws: RedisError.self) {
                try await Self.crashing(after: "apply", h).apply(entry: read.entry, partition: read.partition)
            }
            #expect(try await h.coins(alice) == 4000)
            #expect(try await h.apply(read).outcome == .ackedElsewhere)
            #expect(try await h.coins(alice) == 4000)
            #expect(try await h.pendingCount() == 0)
        }
    }

    /// The thief's race: two users submit the same purchases at once, in different partitions. Each purchase is
    /// credited once, to whoever its chain is bound to; the other is told it belongs to another user.
    @Test func twoUsersRacingForTheSameChainsCreditOnlyTheBoundOne() async throws {
        try await LedgerHarness.with(partitions: Self.partitions) { h in
            let alice = Self.user(in: 1, h.keys, "alice")
            let eve = Self.user(in: 2, h.keys, "eve")
            let otids = (0..<12).map { Self.chain(notIn: 1, h.keys, from: 3_000_000 + 1000 * $0) }
            for otid in otids {
                try await h.submit(Fixture.client(alice, [Fixture.transaction(otid, product: "coins100")]))
                try await h.submit(Fixture.client(eve, [Fixture.transaction(otid, product: "coins100")]))
            }
            let reads = try await h.read()
            #expect(reads.count == 2 * otids.count)
            let outcomes = try await Self.applyConcurrently(reads, h)
            #expect(outcomes.filter { $0.outcome == .fulfilled }.count == otids.count)
            #expect(outcomes.filter { $0.reason == "owned_by_another_user" }.count == otids.count)
            var bound: [String: Int] = [:]
            for otid in otids {
                let owner = try #require(try await h.redis.send("GET", h.keys.binding(originalTransactionId: otid)).string)
                bound[owner, default: 0] += 1
            }
            _ = try await h.drain()
            #expect(try await h.coins(alice) == Int64(100 * bound[alice, default: 0]))
            #expect(try await h.coins(eve) == Int64(100 * bound[eve, default: 0]))
            let total = try await h.coins(alice) + (try await h.coins(eve))
            #expect(total == Int64(100 * otids.count))
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    /// Apple's word about purchases of chains in two partitions, before anyone owns them: each part is parked in its
    /// chain's partition; the owner's submission claims both chains, and each part is then applied once.
    @Test func anOwnerlessEventAboutChainsInTwoPartitionsIsParkedInEach() async throws {
        try await LedgerHarness.with(partitions: Self.partitions) { h in
            let first = Self.chain(notIn: -1, in: 4, h.keys)
            let second = Self.chain(notIn: -1, in: 11, h.keys)
            let event = PurchaseEvent(
                jobId: "jobBoth", kind: .notificationV1, source: .apple, environment: "Sandbox", verifiedAt: testNow,
                transactions: [
                    Fixture.transaction(first, product: "coins100", revoked: testNow),
                    Fixture.transaction(second, product: "coins100", revoked: testNow),
                ])
            try await h.submit(event)
            var outcomes: [LedgerOutcome] = []
            for read in try await h.read() { outcomes.append(try await h.apply(read)) }
            #expect(outcomes.map(\.outcome) == [.forwarded])
            #expect(try await h.drain().map(\.outcome) == [.parked, .parked])
            #expect(try await h.redis.send("LLEN", h.keys.parked(originalTransactionId: first)).int == 1)
            #expect(try await h.redis.send("LLEN", h.keys.parked(originalTransactionId: second)).int == 1)
            #expect(try await h.hash(h.keys.job("jobBoth", partition: 4))["result"]?.contains("forwarded") == true)

            let alice = Self.user(in: 8, h.keys)
            let bought = try await h.deliver(
                Fixture.client(alice, [Fixture.transaction(first, product: "coins100"), Fixture.transaction(second, product: "coins100")]))
            #expect(bought.outcome == .fulfilled)
            #expect(bought.unparked == 2)
            #expect(try await h.coins(alice) == 200)
            let refunds = try await h.drain()
            #expect(refunds.map(\.outcome) == [.fulfilled, .fulfilled])
            #expect(refunds.compactMap { $0.transactions?.first?.result }.sorted() == ["refunded", "refunded"])
            #expect(try await h.coins(alice) == 0)
            #expect(try await h.drain().isEmpty)
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    /// Apple's notification came first and was parked in its chain's partition; the buyer's submission (another
    /// partition) claims the chain, which moves the notification back before the submission's own apply. The
    /// notification waits for the claimant, so the buyer's submission answers `applied` and Apple's word `duplicate`.
    @Test func anEventAClaimMovedBackWaitsForTheClaimantToApplyFirst() async throws {
        try await LedgerHarness.with(partitions: Self.partitions) { h in
            let (alice, otid, purchase) = try await Self.purchaseAfterAParkedNotification(h, buyerIn: 3)
            let chainPartition = h.keys.partition(ofOriginalTransaction: otid)
            let gate = PauseAfterFunction(base: h.redis, function: LedgerFunctions.library.function("claim"))
            let paused = LedgerApplier(
                redis: gate, catalog: testCatalog, keys: h.keys, group: LedgerHarness.group, clampRefunds: false, now: { testNow })
            let buying = Task { try await paused.apply(entry: purchase.entry, partition: purchase.partition) }
            await gate.reached()

            let unparked = try await h.read()
            #expect(unparked.map(\.partition) == [chainPartition])
            #expect(unparked.first?.entry.string(LedgerDelivery.Field.after) == "jobBuy")
            for read in unparked { #expect(try await h.apply(read).outcome == .forwarded) }
            let handedOver = try #require(try await h.read().first)
            #expect(handedOver.partition == 3)
            let noting = Task { try await h.apply(handedOver) }
            try await Task.sleep(for: .milliseconds(400))
            #expect(try await h.coins(alice) == 0, "the notification waits while the buyer's submission has not applied")

            gate.release()
            let bought = try await buying.value
            let noted = try await noting.value
            #expect(bought.transactions?.map(\.result) == ["applied"], "\(bought)")
            #expect(bought.unparked == 1)
            #expect(noted.transactions?.map(\.result) == ["duplicate"], "\(noted)")
            #expect(try await h.coins(alice) == 100)
            #expect(try await h.job("jobBuy")?.state == .fulfilled)
            #expect(try await h.drain().isEmpty)
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    /// A claimant that crashed after its claim never finishes on its own: the event it moved back waits only
    /// ``LedgerApplier/claimantWait``, then applies for the chain's owner; the claimant's retry is the duplicate.
    @Test func anEventAClaimMovedBackAppliesAfterTheWaitWhenTheClaimantCrashed() async throws {
        try await LedgerHarness.with(partitions: Self.partitions) { h in
            let (alice, _, purchase) = try await Self.purchaseAfterAParkedNotification(h, buyerIn: 12)
            await #expect(throws: RedisError.self) {
                try await Self.crashing(after: "claim", h).apply(entry: purchase.entry, partition: purchase.partition)
            }

            var waiting = h.applier
            waiting.claimantWait = .milliseconds(300)
            for read in try await h.read() {
                #expect(try await waiting.apply(entry: read.entry, partition: read.partition).outcome == .forwarded)
            }
            let handedOver = try #require(try await h.read().first)
            let started = ContinuousClock.now
            let noted = try await waiting.apply(entry: handedOver.entry, partition: handedOver.partition)
            #expect(ContinuousClock.now - started >= .milliseconds(300), "it waited for the claimant first")
            #expect(noted.transactions?.map(\.result) == ["applied"], "\(noted)")
            #expect(try await h.coins(alice) == 100)

            let retried = try await h.apply(purchase)
            #expect(retried.transactions?.map(\.result) == ["duplicate"], "\(retried)")
            #expect(try await h.coins(alice) == 100)
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    /// With `TOLLGATE_REDIS_WAIT_REPLICAS`, a claim or hand-over no replica acknowledged is not relied on: nothing is
    /// credited or acknowledged on another primary, the entry stays pending, and its retry finishes it once.
    @Test func aStepNoReplicaAcknowledgedIsNotReliedOn() async throws {
        try await LedgerHarness.with(partitions: Self.partitions) { h in
            var waiting = h.applier
            waiting.durability = LedgerApplier.Durability(replicas: 1, timeoutMilliseconds: 50)  // this server has none
            let alice = Self.user(in: 4, h.keys)
            let otid = Self.chain(notIn: 4, h.keys)
            try await h.submit(Fixture.client(alice, [Fixture.transaction(otid, product: "coins100")]))
            let purchase = try #require(try await h.read().first)
            await #expect(throws: LedgerError.self) { try await waiting.apply(entry: purchase.entry, partition: purchase.partition) }
            #expect(try await h.coins(alice) == 0, "nothing credited on the strength of an unreplicated claim")
            #expect(try await h.pendingCount() == 1)
            #expect(try await h.apply(purchase).outcome == .fulfilled)
            #expect(try await h.coins(alice) == 100)

            let refund = Fixture.notification("REFUND", [Fixture.transaction(otid, product: "coins100", revoked: testNow)])
            try await h.submit(refund)
            let note = try #require(try await h.read().first)
            await #expect(throws: LedgerError.self) { try await waiting.apply(entry: note.entry, partition: note.partition) }
            #expect(try await h.pendingCount() == 1, "the source entry is not acknowledged after an unreplicated hand-over")
            #expect(try await h.apply(note).outcome == .forwarded)
            #expect(try await Self.entries(h, partition: 4).filter { $0.string(LedgerDelivery.Field.from) != nil }.count == 1)
            #expect(try await h.drain().map(\.outcome) == [.fulfilled])
            #expect(try await h.coins(alice) == 0)
        }
    }

    @Test func anEntryHandedOverTooOftenIsRefusedAsMalformed() async throws {
        try await LedgerHarness.with(partitions: Self.partitions) { h in
            let alice = Self.user(in: 6, h.keys)
            var fields = try Fixture.client(alice, [Fixture.transaction("4000001", product: "coins100")]).streamFields()
            fields.append((LedgerDelivery.Field.moves, Array(String(LedgerDelivery.maximumMoves).utf8)))
            _ = try await h.redis.xadd(h.keys.verified(partition: 2).stream, fields: fields)
            let read = try #require(try await h.read().first)
            await #expect(throws: LedgerError.self) { try await h.apply(read) }
            #expect(try await h.coins(alice) == 0)
            #expect(try await Self.entries(h, partition: 6).isEmpty)
        }
    }
}

/// Runs every command on `base`. After the first call of `function` has run, either throws
/// ``RedisError/unknownOutcome(_:)`` instead of its reply (`CrashAfterFunction`, as a fulfiller killed at that point
/// would leave it) or holds its reply until ``release()`` (`PauseAfterFunction`).
private class AfterFunction: RedisCommandExecutor, @unchecked Sendable {
    let base: any RedisCommandExecutor
    let function: String
    private let happened = Mutex(false)

    init(base: any RedisCommandExecutor, function: String) {
        self.base = base
        self.function = function
    }

    var commandTimeout: Duration { base.commandTimeout }

    /// What happens once, after the first call of `function` ran.
    func after() async throws {}

    func send(_ command: RedisCommand, timeout: Duration?) async throws -> RedisReply {
        let reply = try await base.send(command, timeout: timeout)
        if isFirstCall(among: [command]) { try await after() }
        return reply
    }

    /// Pipelines too: the ledger sends its cross-partition steps as a pipeline (the call and its `WAIT`).
    func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        let replies = try await base.pipeline(commands)
        if isFirstCall(among: commands) { try await after() }
        return replies
    }

    private func isFirstCall(among commands: [RedisCommand]) -> Bool {
        let isTarget = commands.contains { command in
            command.arguments.count > 1 && String(decoding: command.arguments[0], as: UTF8.self).uppercased() == "FCALL"
                && String(decoding: command.arguments[1], as: UTF8.self) == function
        }
        return isTarget
            && happened.withLock { happened in
                defer { happened = true }
                return !happened
            }
    }
}

private final class CrashAfterFunction: AfterFunction, @unchecked Sendable {
    override func after() async throws { throw RedisError.unknownOutcome("the test's crash after \(function)") }
}

private final class PauseAfterFunction: AfterFunction, @unchecked Sendable {
    private let (reachedStream, reachedContinuation) = AsyncStream<Void>.makeStream()
    private let (releaseStream, releaseContinuation) = AsyncStream<Void>.makeStream()

    /// Returns once the call of `function` has run and is held.
    func reached() async {
        for await _ in reachedStream { return }
    }

    func release() { releaseContinuation.finish() }

    override func after() async throws {
        reachedContinuation.yield()
        for await _ in releaseStream {}
    }
}
