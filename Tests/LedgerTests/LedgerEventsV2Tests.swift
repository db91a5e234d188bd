import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// Schema-v2 events (docs/EVENTS.md): every ledger change writes one JSON event with a per-user `seq` (1, 2, 3… no
/// gaps), an `id` stored with it, the revenue facts Apple stated, and the same bytes in the user's own log.
@Suite struct LedgerEventsV2Tests {
    /// The fields the tests read; the event carries more.
    struct Event: Decodable, Equatable {
        var id: String
        var type: String
        var userId: String?
        var seq: Int
        var at: String
        var store: String
        var environment: String
        var productId: String?
        var transactionId: String?
        var originalTransactionId: String?
        var quantity: Int?
        var price: Int64?
        var currency: String?
        var storefront: String?
        var offerType: Int?
        var offerIdentifier: String?
        var ownershipType: String?
        var delta: Int?
        var balance: Int?
        var entitlement: String?
        var state: String?
        var expiresAt: String?
        var autoRenew: Bool?
        var seqScope: String?
        var notificationType: String?
    }

    static func decode(_ text: String?) throws -> Event {
        try JSONDecoder().decode(Event.self, from: Data(try #require(text).utf8))
    }

    static func userEvents(_ h: LedgerHarness, _ user: String) async throws -> [Event] {
        try await h.events(user).filter { $0.string("event.version") == "2" }.map { try decode($0.string("event")) }
    }

    static func iso(_ ms: Int64) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"
        return formatter.string(from: Date(timeIntervalSince1970: Double(ms) / 1000))
    }

    @Test func everyChangeIsOneEventWithTheNextSeqAndTheRevenueFacts() async throws {
        try await LedgerHarness.with { h in
            var paid = Fixture.transaction("c1", product: "coins100", quantity: 2)
            paid.price = 1_990
            paid.currency = "EUR"
            paid.storefront = "DEU"
            _ = try await h.deliver(Fixture.client("alice", [paid], environment: "Production"))
            let month: Int64 = 30 * 86_400_000
            let start = testNow - 86_400_000
            _ = try await h.deliver(
                Fixture.client("alice", [Fixture.transaction("s1", product: "vip.month", purchase: start, expires: start + month)]))
            _ = try await h.deliver(
                Fixture.notification(
                    "DID_RENEW",
                    [Fixture.transaction("s2", product: "vip.month", otid: "s1", purchase: start + month, expires: start + 2 * month)]))
            _ = try await h.deliver(
                Fixture.notification("REFUND", [Fixture.transaction("c1", product: "coins100", quantity: 2, revoked: testNow)]))
            _ = try await h.deliver(Fixture.client("bob", [Fixture.transaction("c9", product: "coins100")]))

            let events = try await Self.userEvents(h, "alice")
            #expect(events.map(\.seq) == Array(1...events.count), "gap-free, in stream order")
            #expect(events.map(\.type) == ["purchase", "purchase", "renewal", "refund"])
            #expect(Set(events.map(\.id)).count == events.count)
            #expect(events.allSatisfy { $0.userId == "alice" && $0.store == "app_store" && $0.at == Self.iso(testNow) })

            let bought = events[0]
            #expect(bought.environment == "production")
            #expect(bought.productId == "coins100" && bought.transactionId == "c1" && bought.quantity == 2)
            #expect(bought.price == 1_990 && bought.currency == "EUR" && bought.storefront == "DEU")
            #expect(bought.ownershipType == "PURCHASED")
            #expect(bought.delta == 200 && bought.balance == 200)
            #expect(events[1].entitlement == "vip" && events[1].state == "active" && events[1].autoRenew == false)
            #expect(events[1].expiresAt == Self.iso(start + month))
            #expect(events[2].transactionId == "s2" && events[2].originalTransactionId == "s1")
            #expect(events[2].expiresAt == Self.iso(start + 2 * month))
            #expect(events[3].delta == -200 && events[3].balance == 0)
            #expect(try await Self.userEvents(h, "bob").map(\.seq) == [1], "each user counts from 1")

            // The entry carries what a consumer routes by without parsing the JSON.
            let entries = try await h.events("alice")
            #expect(entries.map { $0.string("seq") } == events.map { String($0.seq) })
            #expect(entries.map { $0.string("event.id") } == events.map(\.id))
            #expect(entries.map { $0.string("event.type") } == events.map(\.type))
            #expect(entries[0].string("kind") == "coins", "the v1 fields stay readable for one release")

            // The record keeps the revenue facts too.
            let record = try await h.hash(h.keys.transaction(user: "alice", transactionId: "c1"))
            #expect(record["price"] == "1990" && record["currency"] == "EUR" && record["storefront"] == "DEU")
        }
    }

    @Test func applesJWSTravelsWithTheEventOnlyWhenTheVerifierKeptIt() async throws {
        try await LedgerHarness.with { h in
            var kept = Fixture.client("alice", [Fixture.transaction("c1", product: "coins100")])
            kept.apple = "eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiYzEifQ.c2ln"
            _ = try await h.deliver(kept)
            _ = try await h.deliver(Fixture.client("alice", [Fixture.transaction("c2", product: "coins100")]))
            let texts = try await h.events("alice").compactMap { $0.string("event") }
            #expect(texts.count == 2)
            #expect(texts[0].hasSuffix(#","apple":"eyJhbGciOiJFUzI1NiJ9.eyJ0cmFuc2FjdGlvbklkIjoiYzEifQ.c2ln"}"#))
            #expect(!texts[1].contains("apple"))
        }
    }

    @Test func theUsersLogHoldsTheSameBytesUnderItsSeq() async throws {
        try await LedgerHarness.with { h in
            for n in 1...3 {
                _ = try await h.deliver(Fixture.client("alice", [Fixture.transaction("c\(n)", product: "coins100")]))
            }
            let stream = try await h.events("alice").map { $0.string("event") }
            let log = try await h.redis.xrange(h.keys.userEvents(user: "alice"))
            #expect(log.map(\.id) == ["1-0", "2-0", "3-0"])
            #expect(log.map { $0.string("event") } == stream)
            let ttl = try await h.redis.send("TTL", h.keys.userEvents(user: "alice")).int ?? 0
            #expect(ttl > 89 * 86_400 && ttl <= 90 * 86_400)
        }
    }

    @Test func aReplayedEntryWritesNoSecondEventAndLeavesNoGap() async throws {
        try await LedgerHarness.with { h in
            try await h.submit(Fixture.client("alice", [Fixture.transaction("c1", product: "coins100")]))
            let read = try #require(try await h.read().first)
            #expect(try await h.apply(read).outcome == .fulfilled)
            #expect(try await h.apply(read).outcome == .ackedElsewhere)
            _ = try await h.deliver(Fixture.client("alice", [Fixture.transaction("c1", product: "coins100")]))
            _ = try await h.deliver(Fixture.client("alice", [Fixture.transaction("c2", product: "coins100")]))
            #expect(try await Self.userEvents(h, "alice").map(\.seq) == [1, 2], "a duplicate changes nothing")
        }
    }

    @Test func datesAreISO8601WithMillisecondsAcrossCalendarEdges() async throws {
        try await LedgerHarness.with { h in
            // 2000-02-29, 2024-12-31T23:59:59.999, 2100-03-01 (not a leap year), 1970-01-01.
            let instants: [Int64] = [951_782_400_123, 1_735_689_599_999, 4_107_542_400_000, 0, 1_764_094_596_007]
            for (n, expires) in instants.enumerated() {
                _ = try await h.deliver(
                    Fixture.client(
                        "u\(n)", [Fixture.transaction("s\(n)", product: "vip.month", purchase: 0, expires: expires)]))
                let event = try #require(try await Self.userEvents(h, "u\(n)").last)
                #expect(event.expiresAt == Self.iso(expires), "\(expires)")
            }
        }
    }

    @Test func anAppLevelNotificationHasNoUserAndASequenceOfItsOwn() async throws {
        try await LedgerHarness.with { h in
            _ = try await h.deliver(Fixture.notification("CONSUMPTION_REQUEST_SUMMARY", []))
            _ = try await h.deliver(Fixture.notification("RESCIND_CONSENT", []))
            let events = try await h.allEvents().filter { $0.string("user") == nil }.map { try Self.decode($0.string("event")) }
            #expect(events.map(\.seq) == [1, 2])
            #expect(events.allSatisfy { $0.userId == nil && $0.type == "app_notification" && $0.seqScope == "app.p0" })
            #expect(events.map(\.notificationType) == ["CONSUMPTION_REQUEST_SUMMARY", "RESCIND_CONSENT"])
        }
    }
}
