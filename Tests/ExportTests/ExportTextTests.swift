import Core
import Export
import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// What PostgreSQL cannot store (docs/EXPORT.md, "Text PostgreSQL cannot store"): issue 42 item 8.
@Suite(.serialized) struct ExportTextTests {
    /// A NUL inside an Apple-signed field, and in reasons the ledger holds (written before ingest refused them): every
    /// row is written, the NUL stored as the six characters `\u0000` in its column and in `body` alike, nothing is
    /// dead-lettered, and the audit agrees.
    @Test func aNulIsWrittenEscapedAndNeverDeadLettered() async throws {
        try await ExportRig.with(partitions: 1) { rig in
            let (redis, keys) = (rig.ledger.redis, rig.ledger.keys)
            var sale = Sale.coins("c1")
            sale.offerIdentifier = "promo\u{0}x"
            try await rig.apply(Fixture.client("alice", [sale], environment: "Production"))
            _ = try await LedgerGrants.grant(
                LedgerGrants.Request(user: "alice", coins: 5, reason: "a\u{0}b", by: "desk", now: testNow), keys: keys, on: redis)
            _ = try await CoinSpend(user: "alice", amount: 1, reason: "c\u{0}d", idempotencyKey: "order-1", by: "shop")
                .run(on: redis, keys: keys, now: testNow + 1)
            #expect(try await rig.exportEverything())
            #expect(try await redis.xrange(keys.events().deadLetter).isEmpty, "nothing dead-lettered for its encoding")
            #expect(try await rig.number("SELECT count(*) FROM events") == 3)
            let escaped = #"promo\u0000x"#
            #expect(try await rig.strings("SELECT offer_identifier FROM events WHERE type = 'purchase'") == [escaped])
            #expect(try await rig.strings("SELECT body->>'offerIdentifier' FROM events WHERE type = 'purchase'") == [escaped])
            #expect(try await rig.strings("SELECT offer_identifier FROM transactions") == [escaped])
            #expect(try await rig.strings("SELECT reason FROM grants") == [#"a\u0000b"#])
            #expect(try await rig.strings("SELECT body->>'reason' FROM events WHERE type = 'grant.created'") == [#"a\u0000b"#])
            #expect(try await rig.strings("SELECT reason FROM spends") == [#"c\u0000d"#])
            let audit = try await rig.audit()
            #expect(audit.differences == [])
        }
    }
}
