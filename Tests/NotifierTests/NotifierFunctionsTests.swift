import Foundation
import Pipeline
import Redis
import TestSupport
import Testing
import Webhooks

/// `tollgate_notifier_v4`'s `pull` and `finish` on a real Redis: what each takes, leases, acknowledges and leaves
/// scheduled (Shared/Webhooks/Lua/notifier.lua).
@Suite struct NotifierFunctionsTests {
    static let group = "webhook:crm"

    /// The endpoint's keys in `user`'s partition, its group created.
    private func keys(_ rig: NotifierRig, user: String) async throws -> WebhookKeys {
        let keys = rig.keys.webhook("crm", partition: rig.keys.partition(ofUser: user))
        _ = try await rig.redis.xgroupCreate(keys.stream, group: Self.group, startID: "0", makeStream: true)
        return keys
    }

    private func pull(
        _ rig: NotifierRig, _ keys: WebhookKeys, take: Int, now: Int64, token: String, horizon: Duration = .seconds(3600)
    ) async throws -> NotifierFunctions.Pulled {
        try await NotifierFunctions.pull(
            on: rig.redis, keys: keys, group: Self.group, consumer: "c", read: 10, take: take, now: now, token: token,
            lease: .seconds(30), recheck: .seconds(300), horizon: horizon)
    }

    private func pending(_ rig: NotifierRig, _ keys: WebhookKeys) async throws -> Int {
        try await rig.redis.xpendingSummary(keys.stream, group: Self.group).count
    }

    private func due(_ rig: NotifierRig, _ keys: WebhookKeys, _ id: String) async throws -> Int64? {
        try await rig.redis.send(RedisCommand("ZSCORE", keys.due, id)).string.flatMap { Int64($0) }
    }

    /// Two events of u1 written and pulled: seq 1 taken under `a:1/<id>`, seq 2 blocked behind it.
    private func firstOfTwoTaken(
        _ rig: NotifierRig
    ) async throws -> (
        keys: WebhookKeys, first: ContractEventWriter.Written, second: ContractEventWriter.Written, now: Int64,
        taken: NotifierFunctions.Taken
    ) {
        let keys = try await keys(rig, user: "u1")
        let first = try await rig.writer.append(user: "u1")
        let second = try await rig.writer.append(user: "u1")
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let taken = try #require(try await pull(rig, keys, take: 10, now: now, token: "a:1").taken.first)
        #expect(taken.entry.id == first.entryID)
        return (keys, first, second, now, taken)
    }

    /// Finishes u1's seq 1 as delivered, asking to take seq 2 under `a:2`.
    private func finishFirst(
        _ rig: NotifierRig,
        _ setup: (
            keys: WebhookKeys, first: ContractEventWriter.Written, second: ContractEventWriter.Written, now: Int64,
            taken: NotifierFunctions.Taken
        )
    ) async throws -> (acknowledged: Bool, next: String?, taken: NotifierFunctions.Taken?, dropped: Int) {
        try await NotifierFunctions.finish(
            on: rig.redis, keys: setup.keys, group: Self.group, entryID: setup.first.entryID, subject: "u1", seq: 1,
            token: setup.taken.token, outcome: .delivered, now: setup.now + 5, next: ("a:2", .seconds(30)))
    }

    @Test func aPullTakesOnlyEachSubjectsNextSeqAndLeasesIt() async throws {
        try await NotifierRig.with(partitions: 1) { rig in
            let keys = try await keys(rig, user: "u1")
            let first = try await rig.writer.append(user: "u1")
            let second = try await rig.writer.append(user: "u1")
            let other = try await rig.writer.append(user: "u2")
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let pulled = try await pull(rig, keys, take: 10, now: now, token: "a:1")
            #expect(pulled.read == 3 && pulled.admitted == 3)
            // u1's seq 2 is blocked behind seq 1; seq 1 and u2's seq 1 are taken under their own tokens.
            #expect(Set(pulled.taken.map(\.entry.id)) == [first.entryID, other.entryID])
            #expect(pulled.taken.allSatisfy { $0.state == .go && $0.token == "a:1/\($0.entry.id)" })
            let u1 = try #require(pulled.taken.first { $0.entry.id == first.entryID })
            #expect(try await rig.redis.send(RedisCommand("GET", keys.lease("u1"))).string == u1.token)
            // Each taken entry is due again at its lease's end, the blocked one at the recheck.
            #expect(try await due(rig, keys, first.entryID) == now + 30_000)
            #expect(try await due(rig, keys, second.entryID) == now + 300_000)
            // A second replica pulling meanwhile takes nothing: every entry is leased, reserved or blocked.
            #expect(try await pull(rig, keys, take: 10, now: now + 1, token: "b:1").taken.isEmpty)
            // Nor when the lease's reservation is over but the lease itself still holds (busy): due at its end.
            _ = try await rig.redis.send(RedisCommand("ZADD", keys.due, "XX", String(now), first.entryID))
            #expect(try await pull(rig, keys, take: 10, now: now + 2, token: "b:2").taken.isEmpty)
            let busyUntil = try #require(try await due(rig, keys, first.entryID))
            #expect(busyUntil > now + 2 && busyUntil <= now + 2 + 30_000)
        }
    }

    @Test func finishingTakesTheNextSeqInTheSameCallAndAcknowledges() async throws {
        try await NotifierRig.with(partitions: 1) { rig in
            let setup = try await firstOfTwoTaken(rig)
            let (keys, second, now) = (setup.keys, setup.second, setup.now)
            let finished = try await finishFirst(rig, setup)
            #expect(finished.acknowledged)
            let next = try #require(finished.taken)
            #expect(next.entry.id == second.entryID && next.token == "a:2" && next.state == .go && next.attempts == 0)
            #expect(WebhookEvent(entry: next.entry)?.seq == 2)
            #expect(try await rig.redis.send(RedisCommand("GET", keys.lease("u1"))).string == "a:2")
            #expect(try await rig.cursor("crm", user: "u1") == 1)
            #expect(try await pending(rig, keys) == 1)
            // Without a next token the next seq is only made due (the loop takes it).
            let again = try await NotifierFunctions.finish(
                on: rig.redis, keys: keys, group: Self.group, entryID: second.entryID, subject: "u1", seq: 2, token: "a:2",
                outcome: .delivered, now: now + 6)
            #expect(again.acknowledged && again.taken == nil && again.next == nil)
            #expect(try await pending(rig, keys) == 0)
            #expect(try await rig.redis.send(RedisCommand("EXISTS", keys.lease("u1"))).int == 0)
            #expect(try await rig.cursor("crm", user: "u1") == 2)
        }
    }

    @Test func aFinishThatWouldTakeABusySubjectLeavesItScheduled() async throws {
        try await NotifierRig.with(partitions: 1) { rig in
            let setup = try await firstOfTwoTaken(rig)
            let (keys, second, now) = (setup.keys, setup.second, setup.now)
            // Our lease ran out and another replica's delivery holds the subject now.
            _ = try await rig.redis.send(RedisCommand("SET", keys.lease("u1"), "b:9", "PX", "20000"))
            let finished = try await finishFirst(rig, setup)
            #expect(finished.taken == nil)
            #expect(try await rig.redis.send(RedisCommand("GET", keys.lease("u1"))).string == "b:9")
            let dueAt = try #require(try await due(rig, keys, second.entryID))
            #expect(dueAt > now + 5 && dueAt <= now + 5 + 20_000)
        }
    }

    @Test func finishedAndOrphanedEntriesAreAcknowledgedByThePull() async throws {
        try await NotifierRig.with(partitions: 1) { rig in
            let keys = try await keys(rig, user: "u1")
            let first = try await rig.writer.append(user: "u1")
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            #expect(try await pull(rig, keys, take: 0, now: now, token: "a:1").admitted == 1)
            // Another endpoint replica already moved the cursor past seq 1: the entry is done without a request.
            _ = try await rig.redis.send(RedisCommand("HSET", keys.cursor, "u1", "1"))
            #expect(try await pull(rig, keys, take: 10, now: now, token: "a:2").taken.isEmpty)
            #expect(try await pending(rig, keys) == 0)
            #expect(try await due(rig, keys, first.entryID) == nil)
            // An entry trimmed from the stream while scheduled is dropped and acknowledged.
            let second = try await rig.writer.append(user: "u1")
            #expect(try await pull(rig, keys, take: 0, now: now, token: "a:3").admitted == 1)
            _ = try await rig.redis.send(RedisCommand("XDEL", keys.stream, second.entryID))
            #expect(try await pull(rig, keys, take: 10, now: now, token: "a:4").taken.isEmpty)
            #expect(try await pending(rig, keys) == 0)
            #expect(try await due(rig, keys, second.entryID) == nil)
        }
    }

    @Test func aBlockedEntryPastTheHorizonComesBackExpired() async throws {
        try await NotifierRig.with(partitions: 1) { rig in
            let keys = try await keys(rig, user: "u1")
            try await rig.writer.append(user: "u1")
            let second = try await rig.writer.append(user: "u1")
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            #expect(try await pull(rig, keys, take: 0, now: now, token: "a:1").admitted == 2)
            // Seq 1 vanished before it was delivered (its schedule too): seq 2 is blocked on it.
            _ = try await rig.redis.send(RedisCommand("ZREM", keys.due, try #require(await rig.redis.xrange(keys.stream).first?.id)))
            #expect(try await pull(rig, keys, take: 10, now: now, token: "a:2", horizon: .seconds(60)).taken.isEmpty)
            // Past the horizon, the pull dead-letters both itself (v4: even with nothing taken, as while a breaker is
            // open), and the subject's cursor moves past them: its later events go on.
            let later = now + 60_000 + 30_000 + 301_000
            let pulled = try await pull(rig, keys, take: 10, now: later, token: "a:3", horizon: .seconds(60))
            #expect(pulled.taken.isEmpty)
            #expect(pulled.expired == 2)
            #expect(try await rig.redis.xrange(keys.dead).count == 2)
            #expect(try await pending(rig, keys) == 0)
            #expect(try await due(rig, keys, second.entryID) == nil)
        }
    }

    @Test func anEntryWithoutASeqComesBackUnreadable() async throws {
        try await NotifierRig.with(partitions: 1) { rig in
            let keys = try await keys(rig, user: "u1")
            let id = try #require(
                try await rig.redis.send(
                    RedisCommand("XADD", keys.stream, "*", "event.version", "2", "event.id", "ev-x", "user", "u1", "event", "{}")
                ).string)
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let taken = try await pull(rig, keys, take: 10, now: now, token: "a:1").taken
            #expect(taken.map(\.entry.id) == [id])
            #expect(taken.first?.state == .unreadable)
            #expect(try await rig.redis.send(RedisCommand("EXISTS", keys.lease("u1"))).int == 0)
        }
    }
}

extension NotifierFunctionsTests {
    /// `fleet`: the replicas seen within the ttl, and the breaker published only when it is open longer than the one
    /// held, until its time.
    @Test func fleetCountsLiveReplicasAndKeepsTheLatestOpenBreaker() async throws {
        try await NotifierRig.with(partitions: 4) { rig in
            let fleet = rig.keys.webhook("crm", partition: rig.keys.partitions[0]).fleet
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            let first = try await NotifierFunctions.fleet(on: rig.redis, keys: fleet, consumer: "a", now: now, ttl: .seconds(10))
            #expect(first.replicas == 1 && first.openUntil == nil)
            #expect(
                try await NotifierFunctions.fleet(on: rig.redis, keys: fleet, consumer: "b", now: now + 1, ttl: .seconds(10)).replicas == 2)
            // "a" opens its breaker; "b" learns it; an earlier time does not shorten it.
            let opened = try await NotifierFunctions.fleet(
                on: rig.redis, keys: fleet, consumer: "a", now: now + 2, ttl: .seconds(10), openUntil: now + 5000)
            #expect(opened.openUntil == now + 5000)
            let shorter = try await NotifierFunctions.fleet(
                on: rig.redis, keys: fleet, consumer: "b", now: now + 3, ttl: .seconds(10), openUntil: now + 1000)
            #expect(shorter.openUntil == now + 5000)
            // Past its time the published breaker no longer counts; "a", not seen for the ttl, is forgotten.
            let later = try await NotifierFunctions.fleet(on: rig.redis, keys: fleet, consumer: "b", now: now + 10_500, ttl: .seconds(10))
            #expect(later.replicas == 1 && later.openUntil == nil)
        }
    }
}
