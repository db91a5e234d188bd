import Core
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// Issue 31, item 5: labelled grants through the ledger's functions (``LedgerGrants``), against real Redis and real
/// purchases credited by the ledger.
@Suite struct LedgerGrantTests {
    /// The user's entitlements as `GET /v1/users/{id}/entitlements` shows them at `now`.
    static func view(_ h: LedgerHarness, _ user: String, now: Int64 = testNow) async throws -> EntitlementsView {
        EntitlementsView(
            hash: try await h.hash(h.keys.account(user: user)),
            grants: try await LedgerGrants.list(user: user, keys: h.keys, on: h.redis), nowMilliseconds: now)
    }

    static func grant(
        _ h: LedgerHarness, _ user: String, entitlement: String? = nil, coins: Int64? = nil, until: Int64? = nil,
        reason: String = "support ticket 42"
    ) async throws -> LedgerGrants.Grant {
        let created = try await LedgerGrants.grant(
            LedgerGrants.Request(
                user: user, entitlement: entitlement, coins: coins, until: until, reason: reason, by: "support-desk",
                now: testNow),
            keys: h.keys, on: h.redis)
        #expect(created.isNew)
        return created.grant
    }

    /// The types of the user's events, oldest first, from the user's own log (the same bytes as the events stream).
    static func loggedTypes(_ h: LedgerHarness, _ user: String) async throws -> [String] {
        try await h.redis.xrange(h.keys.userEvents(user: user)).compactMap { entry in
            entry.fields["event"].flatMap { JSONValue.read($0) }?["type"]?.string
        }
    }

    @Test func aGrantedEntitlementIsLabelled() async throws {
        try await LedgerHarness.with { h in
            let grant = try await Self.grant(h, "alice", entitlement: "vip", until: testNow + 10 * day)
            #expect(grant.grantId.hasPrefix("g_") && grant.grantId.count == 18)
            let row = try #require(try await Self.view(h, "alice").entitlements.first { $0.entitlement == "vip" })
            #expect(row.state == "active" && row.source == "grant" && row.sources == nil)
            #expect(row.expiresAt == EntitlementsView.iso8601(testNow + 10 * day))
            #expect(row.grant?.by == "support-desk" && row.grant?.reason == "support ticket 42")
            #expect(row.grant?.grantId == grant.grantId && row.grant?.until == row.expiresAt)
            // Apple's fields of the account are not written.
            let account = try await h.hash(h.keys.account(user: "alice"))
            #expect(account.keys.filter { $0.hasPrefix("ent:") }.isEmpty)
            #expect(try await h.redis.send(RedisCommand("EXISTS", h.keys.entitlement(user: "alice", name: "vip"))).int == 0)
            // The event: in the events stream (v2 fields beside it) and the user's log, the user's first seq.
            let entry = try #require(try await h.events("alice").last)
            #expect(entry.string("event.type") == "grant.created" && entry.string("seq") == "1")
            let event = try #require(entry.fields["event"].flatMap { JSONValue.read($0) })
            #expect(event["source"]?.string == "grant" && event["entitlement"]?.string == "vip")
            #expect(event["by"]?.string == "support-desk" && event["reason"]?.string == "support ticket 42")
            #expect(event["grantId"]?.string == grant.grantId && event["until"]?.string == row.expiresAt)
            #expect(try await Self.loggedTypes(h, "alice") == ["grant.created"])
        }
    }

    @Test func boughtAndGrantedIsOneRowWithTheLaterEnd() async throws {
        try await LedgerHarness.with { h in
            for user in ["bob", "carol"] {
                try await h.deliver(
                    Fixture.client(user, [Fixture.transaction("\(user)-1", product: "vip.month", expires: testNow + 5 * day)]))
            }
            _ = try await Self.grant(h, "bob", entitlement: "vip", until: testNow + 30 * day)
            _ = try await Self.grant(h, "carol", entitlement: "vip", until: testNow + 2 * day)
            let bob = try await Self.view(h, "bob").entitlements.filter { $0.entitlement == "vip" }
            #expect(bob.count == 1)
            #expect(bob.first?.source == "grant" && bob.first?.sources == ["apple", "grant"])
            #expect(bob.first?.expiresAt == EntitlementsView.iso8601(testNow + 30 * day))
            let carol = try await Self.view(h, "carol").entitlements.filter { $0.entitlement == "vip" }
            #expect(carol.count == 1)
            #expect(carol.first?.source == "apple" && carol.first?.sources == ["apple", "grant"])
            #expect(carol.first?.expiresAt == EntitlementsView.iso8601(testNow + 5 * day))
            #expect(carol.first?.state == "active" && carol.first?.grant?.until == EntitlementsView.iso8601(testNow + 2 * day))
        }
    }

    @Test func aGrantExpiresByItselfAndTheExpiryIsAnEvent() async throws {
        try await LedgerHarness.with { h in
            let until = testNow + day
            let grant = try await Self.grant(h, "alice", entitlement: "vip", until: until)
            let partition = h.keys.partition(ofUser: "alice")
            // Before its end the sweep leaves it.
            #expect(try await LedgerGrants.expireDue(partition: partition, now: until - 1, keys: h.keys, on: h.redis) == 0)
            #expect(try await Self.view(h, "alice", now: until - 1).entitlements.first?.state == "active")
            // Past `until`, the read no longer shows it even before the sweep removes it.
            #expect(try await Self.view(h, "alice", now: until).entitlements.isEmpty)
            #expect(try await LedgerGrants.list(user: "alice", keys: h.keys, on: h.redis).count == 1)
            #expect(try await LedgerGrants.expireDue(partition: partition, now: until + 1000, keys: h.keys, on: h.redis) == 1)
            #expect(try await LedgerGrants.list(user: "alice", keys: h.keys, on: h.redis).isEmpty)
            #expect(try await h.redis.send(RedisCommand("ZCARD", h.keys.grantsDue(partition: partition))).int == 0)
            #expect(try await Self.loggedTypes(h, "alice") == ["grant.created", "grant.expired"])
            let expired = try #require(try await h.events("alice").last)
            #expect(expired.string("event.type") == "grant.expired" && expired.string("seq") == "2")
            #expect(expired.fields["event"].flatMap { JSONValue.read($0) }?["grantId"]?.string == grant.grantId)
            // A second sweep finds nothing.
            #expect(try await LedgerGrants.expireDue(partition: partition, now: until + 2000, keys: h.keys, on: h.redis) == 0)
        }
    }

    @Test func aRevokedGrantIsGoneAndRevokingTwiceFindsNothing() async throws {
        try await LedgerHarness.with { h in
            let grant = try await Self.grant(h, "alice", entitlement: "vip", until: testNow + 10 * day)
            let revoked = try await LedgerGrants.revoke(
                user: "alice", grantId: grant.grantId, by: "ops", now: testNow + 1, keys: h.keys, on: h.redis)
            #expect(revoked?.grant == grant)
            #expect(try await Self.view(h, "alice").entitlements.isEmpty)
            #expect(try await h.redis.send(RedisCommand("ZCARD", h.keys.grantsDue(partition: h.keys.partition(ofUser: "alice")))).int == 0)
            let event = try #require(try await h.events("alice").last?.fields["event"].flatMap { JSONValue.read($0) })
            #expect(event["type"]?.string == "grant.revoked" && event["revokedBy"]?.string == "ops")
            #expect(event["by"]?.string == "support-desk")
            #expect(
                try await LedgerGrants.revoke(
                    user: "alice", grantId: grant.grantId, by: "ops", now: testNow + 2, keys: h.keys, on: h.redis) == nil)
            #expect(try await Self.loggedTypes(h, "alice") == ["grant.created", "grant.revoked"])
        }
    }

    /// A refund of Apple's purchase of a granted entitlement leaves the grant; a refund takes coins as the clamp
    /// allows, never granted coins the balance still holds beside it; the audit counts grants apart.
    @Test func refundsNeverTouchGrantsAndTheAuditReportsThemApart() async throws {
        try await LedgerHarness.with(clamp: true) { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("n1", product: "noads")]))
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("c1", product: "coins100")]))
            let grant = try await Self.grant(h, "alice", entitlement: "no_ads", until: testNow + 10 * day)
            _ = try await Self.grant(h, "alice", coins: 50)
            #expect(try await h.coins("alice") == 150)
            try await h.deliver(Fixture.notification("REFUND", [Fixture.transaction("n1", product: "noads", revoked: testNow)]))
            try await h.deliver(Fixture.notification("REFUND", [Fixture.transaction("c1", product: "coins100", revoked: testNow)]))
            let account = try await h.hash(h.keys.account(user: "alice"))
            #expect(account["ent:no_ads:state"] == "revoked")  // Apple's own state
            #expect(account["coins"] == "50" && account["coins.granted"] == "50")
            let row = try #require(try await Self.view(h, "alice").entitlements.first { $0.entitlement == "no_ads" })
            #expect(row.state == "active" && row.source == "grant" && row.grant?.grantId == grant.grantId)
            #expect(try await Self.view(h, "alice").coinsGranted == 50)
            let report = try await h.audit()
            #expect(report.differences.isEmpty)
            #expect(report.granted == [LedgerAudit.Granted(user: "alice", grants: 2, coins: 50)])
        }
    }

    /// A spend took granted coins (the spend helper lowers `coins.granted` to the balance): revoking the coin grant
    /// takes back only what is left of it, never below zero.
    @Test func revokingACoinGrantTakesBackOnlyWhatIsLeft() async throws {
        try await LedgerHarness.with { h in
            let grant = try await Self.grant(h, "alice", coins: 50)
            let account = h.keys.account(user: "alice")
            #expect(try await h.hash(account)["coins.granted"] == "50")
            _ = try await h.redis.send(RedisCommand("HSET", account, "coins", "20", "coins.granted", "20"))  // spent 30
            let revoked = try #require(
                try await LedgerGrants.revoke(user: "alice", grantId: grant.grantId, by: "ops", now: testNow, keys: h.keys, on: h.redis))
            #expect(revoked.taken == 20 && revoked.balance == 0)
            let after = try await h.hash(account)
            #expect(after["coins"] == "0" && after["coins.granted"] == "0")
            #expect(try await h.hash(h.keys.ledgerMeta(user: "alice"))["grants.coins"] == "30")
            let event = try #require(try await h.events("alice").last?.fields["event"].flatMap { JSONValue.read($0) })
            #expect(event["type"]?.string == "grant.revoked" && event["delta"]?.int == -20 && event["coins"]?.int == 50)
        }
    }

    /// A retried grant with the same idempotency key writes nothing and answers the first grant.
    @Test func anIdempotencyKeyGrantsOnce() async throws {
        try await LedgerHarness.with { h in
            let request = LedgerGrants.Request(
                user: "alice", entitlement: "vip", until: testNow + day, reason: "r", by: "k", now: testNow,
                idempotencyKey: "ticket-42")
            let first = try await LedgerGrants.grant(request, keys: h.keys, on: h.redis)
            var again = request
            again.grantId = LedgerGrants.newGrantId()
            let second = try await LedgerGrants.grant(again, keys: h.keys, on: h.redis)
            #expect(first.isNew && !second.isNew && second.grant == first.grant)
            #expect(try await LedgerGrants.list(user: "alice", keys: h.keys, on: h.redis).count == 1)
            #expect(try await h.events("alice").count == 1)
            let ttl = try await h.redis.send(RedisCommand("TTL", h.keys.grantIdempotency(user: "alice", key: "ticket-42"))).int
            #expect((1...604_800).contains(ttl ?? 0))
        }
    }

    /// Issue 42, item 9: an idempotency key used again with another body (entitlement, coins, until or reason) is a
    /// conflict and writes nothing, as a spend's (``CoinSpend``); the same body replays.
    @Test func anIdempotencyKeyWithAnotherBodyIsAConflict() async throws {
        try await LedgerHarness.with { h in
            let request = LedgerGrants.Request(
                user: "alice", entitlement: "vip", until: testNow + day, reason: "r", by: "k", now: testNow,
                idempotencyKey: "ticket-42")
            let first = try await LedgerGrants.grant(request, keys: h.keys, on: h.redis)
            var others: [LedgerGrants.Request] = []
            for change in 0..<4 {
                var other = request
                other.grantId = LedgerGrants.newGrantId()
                switch change {
                case 0: other.reason = "r2"
                case 1: other.until = testNow + 2 * day
                case 2: other.entitlement = "no_ads"
                default: (other.entitlement, other.until, other.coins) = (nil, nil, 5)
                }
                others.append(other)
            }
            for other in others {
                await #expect(throws: LedgerGrants.IdempotencyConflict.self) {
                    try await LedgerGrants.grant(other, keys: h.keys, on: h.redis)
                }
            }
            #expect(try await LedgerGrants.list(user: "alice", keys: h.keys, on: h.redis) == [first.grant])
            #expect(try await h.events("alice").count == 1)
            #expect(try await h.coins("alice") == 0)
            // The same body, from a retry a second later, replays.
            var retry = request
            (retry.grantId, retry.now) = (LedgerGrants.newGrantId(), testNow + 1000)
            let replayed = try await LedgerGrants.grant(retry, keys: h.keys, on: h.redis)
            #expect(!replayed.isNew && replayed.grant == first.grant && replayed.state == .active)
        }
    }

    /// Issue 42, item 9: the same body after a revoke or an expiry replays the grant with its state now, never grants
    /// again (revoked stays revoked; an expiry the sweeper has not removed yet is already `expired`).
    @Test func aReplayAfterARevokeOrAnExpiryAnswersTheGrantsState() async throws {
        try await LedgerHarness.with { h in
            func request(_ key: String, _ now: Int64 = testNow, coins: Int64? = nil) -> LedgerGrants.Request {
                LedgerGrants.Request(
                    user: "alice", entitlement: coins == nil ? "vip" : nil, coins: coins,
                    until: coins == nil ? testNow + day : nil, reason: "r", by: "k", now: now, idempotencyKey: key)
            }
            // Revoked before its end, then retried after its end: revoked, not expired.
            let revoked = try await LedgerGrants.grant(request("revoked"), keys: h.keys, on: h.redis)
            _ = try await LedgerGrants.revoke(
                user: "alice", grantId: revoked.grant.grantId, by: "ops", now: testNow + 1, keys: h.keys, on: h.redis)
            let coins = try await LedgerGrants.grant(request("coins", coins: 7), keys: h.keys, on: h.redis)
            _ = try await LedgerGrants.revoke(
                user: "alice", grantId: coins.grant.grantId, by: "ops", now: testNow + 1, keys: h.keys, on: h.redis)
            let expiring = try await LedgerGrants.grant(request("expiring"), keys: h.keys, on: h.redis)
            for now in [testNow + 2, testNow + 2 * day] {
                let again = try await LedgerGrants.grant(request("revoked", now), keys: h.keys, on: h.redis)
                #expect(!again.isNew && again.grant == revoked.grant && again.state == .revoked)
                let coinsAgain = try await LedgerGrants.grant(request("coins", now, coins: 7), keys: h.keys, on: h.redis)
                #expect(!coinsAgain.isNew && coinsAgain.state == .revoked)
            }
            // Past its end: expired before the sweep and after it.
            let partition = h.keys.partition(ofUser: "alice")
            for sweep in [false, true] {
                if sweep {
                    #expect(try await LedgerGrants.expireDue(partition: partition, now: testNow + 2 * day, keys: h.keys, on: h.redis) == 1)
                }
                let again = try await LedgerGrants.grant(request("expiring", testNow + 2 * day), keys: h.keys, on: h.redis)
                #expect(!again.isNew && again.grant == expiring.grant && again.state == .expired)
            }
            #expect(try await LedgerGrants.list(user: "alice", keys: h.keys, on: h.redis).isEmpty)
            #expect(try await h.coins("alice") == 0)
            #expect(try await Self.loggedTypes(h, "alice").filter { $0 == "grant.created" }.count == 3)
        }
    }

    /// Issue 42, item 9: a body whose `until` has passed only replays (a retry after the grant expired): nothing when
    /// the key names no grant, a conflict when it names another body.
    @Test func aReplayOnlyCallNeverGrants() async throws {
        try await LedgerHarness.with { h in
            var request = LedgerGrants.Request(
                user: "alice", entitlement: "vip", until: testNow + day, reason: "r", by: "k", now: testNow + 2 * day,
                idempotencyKey: "late")
            #expect(try await LedgerGrants.replay(request, keys: h.keys, on: h.redis) == nil)
            #expect(try await LedgerGrants.list(user: "alice", keys: h.keys, on: h.redis).isEmpty)
            request.now = testNow
            let first = try await LedgerGrants.grant(request, keys: h.keys, on: h.redis)
            request.now = testNow + 2 * day
            let replayed = try await LedgerGrants.replay(request, keys: h.keys, on: h.redis)
            #expect(replayed?.grant == first.grant && replayed?.state == .expired && replayed?.isNew == false)
            request.reason = "other"
            await #expect(throws: LedgerGrants.IdempotencyConflict.self) {
                try await LedgerGrants.replay(request, keys: h.keys, on: h.redis)
            }
        }
    }
}
