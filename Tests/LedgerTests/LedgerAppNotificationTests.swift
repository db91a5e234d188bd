import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// A V2 notification about no purchase (`RESCIND_CONSENT`'s `appData`, a summary, an external purchase token) has
/// no owner to wait for: the fulfiller tells the app's backend on the events stream, once, and credits nothing.
@Suite struct LedgerAppNotificationTests {
    static func rescind(job: String, uuid: String = "6f1c0e3a-rescind", appTransactionId: String? = "704289572311039393") -> PurchaseEvent {
        PurchaseEvent(
            jobId: job, kind: .notificationV2, source: .apple, environment: "Production", verifiedAt: testNow,
            transactions: [],
            notification: PurchaseEventNotification(
                type: "RESCIND_CONSENT", notificationUUID: uuid, signedDate: testNow - 1000, version: 2,
                appTransactionId: appTransactionId))
    }

    /// The app-level entries (no `user`) of the events stream.
    static func appEntries(_ h: LedgerHarness) async throws -> [StreamEntry] {
        try await h.redis.xrange(h.keys.events().stream).filter { $0.fields["user"] == nil }
    }

    @Test func rescindConsentIsEmittedOnceForTheAppsBackend() async throws {
        try await LedgerHarness.with { h in
            let id = try await h.submit(Self.rescind(job: "jobRC"))
            let entries = try await h.read()
            #expect(entries.map(\.id) == [id])
            let outcome = try await h.apply(try #require(entries.first))
            #expect(outcome.outcome == .fulfilled)
            #expect(outcome.emitted == "notification")
            let status = try #require(try await h.job("jobRC"))
            #expect(status.state == .fulfilled)

            let emitted = try await Self.appEntries(h)
            #expect(emitted.count == 1)
            let entry = try #require(emitted.first)
            #expect(entry.string("kind") == "notification")
            #expect(entry.string("type") == "RESCIND_CONSENT")
            #expect(entry.string("appTransactionId") == "704289572311039393")
            #expect(entry.string("notificationUUID") == "6f1c0e3a-rescind")
            #expect(entry.string("environment") == "Production")
            #expect(entry.string("signedDate") == String(testNow - 1000))
            #expect(entry.string("at") == String(testNow))

            // The same entry delivered again (a crash before the ack reached us, another replica) adds nothing.
            #expect(try await h.apply(entries[0]).outcome == .ackedElsewhere)
            #expect(try await Self.appEntries(h).count == 1)
            #expect(try await h.pendingCount() == 0)
            // Nothing owned, nothing credited, nothing parked.
            #expect(try await h.redis.send(RedisCommand("KEYS", "tg:{u:*")).array?.isEmpty == true)
            #expect(try await h.redis.send(RedisCommand("KEYS", "tg:{otx:*")).array?.isEmpty == true)
        }
    }

    @Test func summariesAreEmittedButAPurchaseWithoutOwnerIsParkedAndAV1TypeIsNot() async throws {
        try await LedgerHarness.with { h in
            let summary = Fixture.notification("RENEWAL_EXTENSION", subtype: "SUMMARY", [], uuid: "sum-1", job: "jobS")
            #expect(try await h.deliver(summary).emitted == "notification")
            let entry = try #require(try await Self.appEntries(h).first)
            #expect(entry.string("type") == "RENEWAL_EXTENSION")
            #expect(entry.string("subtype") == "SUMMARY")
            #expect(entry.string("appTransactionId") == nil)

            // Apple's word about a purchase waits for its owner instead.
            let refund = Fixture.notification("REFUND", [Fixture.transaction("c9", product: "coins100", revoked: testNow)])
            let parked = try await h.deliver(refund)
            #expect(parked.outcome == .parked)
            #expect(parked.emitted == nil)
            // A V1 body's type proves nothing: no app-level entry for it.
            let v1 = PurchaseEvent(
                jobId: "jobV1", kind: .notificationV1, source: .apple, environment: "Production", verifiedAt: testNow,
                transactions: [], notification: PurchaseEventNotification(type: "CONSUMPTION_REQUEST", version: 1))
            let v1Outcome = try await h.deliver(v1)
            #expect(v1Outcome.outcome == .fulfilled)
            #expect(v1Outcome.emitted == nil)
            #expect(try await Self.appEntries(h).count == 1)
        }
    }
}
