import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// A user's own `appAccountToken` (what `tollctl apple set-account-token` gives Apple): one per user, mapped back to
/// the user exactly as an order's token is, so the ledger credits Apple's word about a purchase carrying it to that
/// user, and nobody else can claim that purchase.
@Suite struct AccountTokenTests {
    @Test func aUserHasOneTokenEvenWhenCreatedConcurrently() async throws {
        try await LedgerHarness.with { h in
            let tokens = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                for _ in 0..<8 {
                    group.addTask { try await AccountToken.getOrCreate(user: "bob", keys: h.keys, on: h.redis) }
                }
                var all: [(String, Bool)] = []
                for try await result in group { all.append(result) }
                return all
            }
            #expect(Set(tokens.map(\.0)).count == 1)
            #expect(tokens.filter(\.1).count == 1, "exactly one run created it")
            let token = try #require(tokens.first?.0)
            #expect(UUID(uuidString: token) != nil && token == token.lowercased())
            #expect(try await h.redis.send("GET", h.keys.accountToken(user: "bob")).string == token)
            #expect(try await h.hash(h.keys.appAccountToken(token)) == [Order.TokenField.user: "bob"])
            // The losers' mappings are gone: only bob's one token leads anywhere.
            #expect(try await h.redis.send("KEYS", "tg:{aat:*}:order").array?.count == 1)
            #expect(try await h.redis.send("PTTL", h.keys.appAccountToken(token)).int == -1)

            let again = try await AccountToken.getOrCreate(user: "bob", keys: h.keys, on: h.redis)
            #expect(again.token == token && !again.created)
            let alices = try await AccountToken.getOrCreate(user: "alice", keys: h.keys, on: h.redis)
            #expect(alices.created && alices.token != token)
            #expect(try await AccountToken.owner(of: token.uppercased(), keys: h.keys, on: h.redis)?.user == "bob")
            #expect(try await AccountToken.owner(of: token, keys: h.keys, on: h.redis)?.orderNo == nil)
        }
    }

    /// A purchase made outside the app: Apple's first notification (no token) is parked; once Apple signs the purchase
    /// with bob's own token, its notifications reach bob, the parked one with them, and the purchase is bound to bob.
    @Test func applesWordCarryingTheTokenReachesTheUserAndNoOneElseMayClaimIt() async throws {
        try await LedgerHarness.with { h in
            let before = Fixture.transaction("1001", product: "coins100")
            let parked = try await h.deliver(Fixture.notification("ONE_TIME_CHARGE", [before]))
            #expect(parked.outcome == .parked, "\(parked)")

            let token = try await AccountToken.getOrCreate(user: "bob", keys: h.keys, on: h.redis).token
            let tagged = Fixture.transaction("1001", product: "coins100", token: token)
            let applied = try await h.deliver(Fixture.notification("CONSUMPTION_REQUEST", [tagged]))
            #expect(applied.outcome == .fulfilled, "\(applied)")
            #expect(applied.unparked == 1, "\(applied)")
            _ = try await h.drain()
            #expect(try await h.coins("bob") == 100)
            #expect(try await h.redis.send("GET", h.keys.binding(originalTransactionId: "1001")).string == "bob")

            let claimed = try await h.deliver(Fixture.client("eve", [tagged]))
            #expect(claimed.outcome == .rejected && claimed.reason == "owned_by_another_user", "\(claimed)")
            let fresh = Fixture.transaction("1002", product: "coins100", token: token)
            let stolen = try await h.deliver(Fixture.client("eve", [fresh]))
            #expect(stolen.outcome == .rejected && stolen.reason == "owned_by_another_user", "\(stolen)")
            #expect(try await h.coins("eve") == 0)
            #expect(try await h.coins("bob") == 100)
        }
    }
}
