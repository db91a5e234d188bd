import Foundation
import Pipeline
import Testing

/// The event's hand-written JSON is `JSONEncoder`'s (sorted keys), and each side reads the other's: events in
/// the streams from before the change and events written now are the same bytes.
struct PurchaseEventJSONTests {
    static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    /// An event with every optional member set or not by `seed`'s bits, and strings with escapes.
    static func event(seed: UInt64) -> PurchaseEvent {
        var generator = SplitMix(state: seed)
        func maybe<T>(_ value: T) -> T? { generator.next() % 2 == 0 ? value : nil }
        func text(_ base: String) -> String {
            ["", "\"q\"", "back\\slash", "line\nbreak", "tab\tand\u{1}", "é/😀", "\u{7f}"].randomElement(using: &generator)! + base
        }
        let transactions = (0..<Int(generator.next() % 3)).map { index in
            PurchaseEventTransaction(
                transactionId: text("t\(index)"), originalTransactionId: text("o\(index)"), productId: text("p"),
                productType: maybe("Consumable"), quantity: Int(generator.next() % 5) + 1,
                purchaseDate: Int64(generator.next() % 2_000_000_000_000), originalPurchaseDate: maybe(1_700_000_000_000),
                expiresDate: maybe(-1), revocationDate: maybe(Int64.max), revocationReason: maybe(1),
                inAppOwnershipType: maybe("FAMILY_SHARED"), appAccountToken: maybe(text("aat")),
                webOrderLineItemId: maybe("w"), signedDate: maybe(Int64.min), isUpgraded: maybe(false), offerType: maybe(3),
                revocationType: maybe("REFUND_PRORATED"), revocationPercentage: maybe(50_000), price: maybe(990),
                currency: maybe("EUR"), appTransactionId: maybe(text("app")), offerIdentifier: maybe(text("offer")),
                offerDiscountType: maybe("FREE_TRIAL"))
        }
        let renewals = (0..<Int(generator.next() % 2)).map { _ in
            PurchaseEventRenewal(
                originalTransactionId: text("o"), productId: maybe("p"), autoRenewStatus: maybe(0),
                autoRenewProductId: maybe("q"), expirationIntent: maybe(2), isInBillingRetryPeriod: maybe(true),
                gracePeriodExpiresDate: maybe(5), signedDate: maybe(6))
        }
        return PurchaseEvent(
            jobId: text("job"), kind: [.receipt, .transaction, .notificationV1, .notificationV2].randomElement(using: &generator)!,
            source: generator.next() % 2 == 0 ? .apple : .client, userId: maybe(text("u")), orderNo: maybe("order-1"),
            environment: "Sandbox", verifiedAt: Int64(generator.next() % 2_000_000_000_000), transactions: transactions,
            renewals: renewals,
            notification: maybe(
                PurchaseEventNotification(
                    type: "DID_RENEW", subtype: maybe("BILLING_RECOVERY"), notificationUUID: maybe("u-1"),
                    signedDate: maybe(7), version: 2, appTransactionId: maybe("a"))))
    }

    @Test func writesJSONEncodersBytesAndReadsThemBack() throws {
        for seed in 0..<500 as Range<UInt64> {
            let event = Self.event(seed: seed)
            let written = try event.encoded()
            #expect(written == Array(try Self.encoder().encode(event)), "seed \(seed)")
            #expect(try PurchaseEvent.decode(written) == event, "seed \(seed)")
            #expect(try JSONDecoder().decode(PurchaseEvent.self, from: Data(written)) == event, "seed \(seed)")
        }
    }

    @Test func refusesEventsWithMissingOrMistypedMembers() throws {
        let event = Self.event(seed: 1)
        var object = try #require(try JSONSerialization.jsonObject(with: Data(event.encoded())) as? [String: Any])
        for key in ["jobId", "kind", "source", "environment", "verifiedAt", "version", "transactions", "renewals"] {
            var broken = object
            broken[key] = nil
            let bytes = Array(try JSONSerialization.data(withJSONObject: broken))
            #expect(throws: (any Error).self, "without \(key)") { try PurchaseEvent.decode(bytes) }
        }
        object["verifiedAt"] = "1700000000000"
        let mistyped = Array(try JSONSerialization.data(withJSONObject: object))
        #expect(throws: (any Error).self) { try PurchaseEvent.decode(mistyped) }
        object["verifiedAt"] = 1
        object["kind"] = "gift"
        let unknownKind = Array(try JSONSerialization.data(withJSONObject: object))
        #expect(throws: (any Error).self) { try PurchaseEvent.decode(unknownKind) }
        #expect(throws: (any Error).self) { try PurchaseEvent.decode(Array("[]".utf8)) }
        #expect(throws: (any Error).self) { try PurchaseEvent.decode(Array(#"{"jobId":"a","jobId":"b"}"#.utf8)) }
    }
}

/// A small seeded generator (SplitMix64), so a failing seed can be run again.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
