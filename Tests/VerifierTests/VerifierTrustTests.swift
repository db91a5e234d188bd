import AppStore
import AppStoreTesting
import Foundation
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification

/// What the verifier keeps of anonymous input, and what a replay costs (issue 13, items 4 and 8).
@Suite(.serialized)
struct VerifierTrustTests {
    /// A genuine notification replayed (rewrapped in other JSON, so another job): the second job makes no Apple
    /// call and hands no second event on, and its status and dedupe key go within the hour.
    @Test func aReplayedNotificationIsVerifiedOnce() async throws {
        try await VerifierHarness.with { harness in
            let purchase = try await harness.sim.purchase()
            let transactionId = try #require(purchase["transactionId"] as? String)
            let request = try await harness.sim.post("/sim/events", ["type": "CONSUMPTION_REQUEST", "transactionId": transactionId])
            let consumption = try #require(request["signedPayload"] as? String)
            let charge = try await harness.sim.post("/sim/events", ["type": "REFUND", "transactionId": transactionId])
            let refund = try #require(charge["signedPayload"] as? String)
            func body(_ payload: String, _ extra: Int) -> String { #"{"signedPayload":"\#(payload)","n":\#(extra)}"# }
            try await harness.withVerifier(try harness.apiSettings()) { _ in
                let first = try await harness.enqueue(kind: .notificationV2, payload: body(consumption, 1), user: nil)
                try await harness.waitForStatus(first) { $0["state"] == "fulfilled" }
                let calls = try await harness.sim.requestCount("api.production")
                let replay = try await Self.enqueue(harness, body(consumption, 2), dedupe: "tg:{p0}:dedupe:replay-1")
                let status = try await harness.waitForStatus(replay) { $0["state"] == "fulfilled" }
                #expect(status["result"]?.contains(#""outcome":"duplicate""#) == true, "\(status)")
                #expect(status["result"]?.contains(first) == true)
                #expect(try await harness.sim.requestCount("api.production") == calls, "the replay called Apple again")
                let statusTTL = try await harness.redis.send("TTL", harness.keys.job(replay)).int ?? -1
                #expect((1...3600).contains(statusTTL), "\(statusTTL)")
                #expect((1...3600).contains(try await harness.redis.send("TTL", "tg:{p0}:dedupe:replay-1").int ?? -1))

                let original = try await harness.enqueue(kind: .notificationV2, payload: body(refund, 1), user: nil)
                #expect(try await harness.waitForEvents(1).map(\.jobId) == [original])
                let again = try await harness.enqueue(kind: .notificationV2, payload: body(refund, 2), user: nil)
                try await harness.waitForStatus(again) { $0["state"] == "fulfilled" }
                #expect(try await harness.events().count == 1)
            }
        }
    }

    /// A V2 job whose body holds no readable `signedPayload` (ingest never enqueues one; a job written into Redis by
    /// anything else might) is rejected as `invalid_format` without any signature work.
    @Test func aNotificationBodyWithoutASignedPayloadIsRejected() async throws {
        try await VerifierHarness.with { harness in
            try await harness.withVerifier { _ in
                for body in [
                    "{}", #"{"signedPayload":7}"#, #"{"signedPayload":""}"#, "not json", #"{"signedPayload":"a","signedPayload":"b"}"#,
                ] {
                    let job = try await harness.enqueue(kind: .notificationV2, payload: body, user: nil)
                    let status = try await harness.waitForStatus(job) { $0["state"] == "rejected" }
                    #expect(status["reason"] == "invalid_format", "\(body): \(status)")
                }
            }
        }
    }

    /// An Apple-endpoint job that Apple did not sign is rejected; its status and dedupe key expire within the hour,
    /// and it leaves its source's backlog. So does a client's junk receipt.
    @Test func rejectedAnonymousJobsAreShortLivedAndLeaveTheBacklog() async throws {
        try await VerifierHarness.with { harness in
            let stranger = try TestCertificateAuthority().signer().sign(json: Data(#"{"notificationType":"TEST"}"#.utf8))
            _ = try await harness.redis.send(
                RedisCommand(
                    "HSET", harness.keys.backlog(), "apple.jobs", 1, "apple.bytes", 5000,
                    "client.jobs", 1, "client.bytes", 7))
            try await harness.withVerifier { _ in
                let forged = try await Self.enqueue(
                    harness, #"{"signedPayload":"\#(stranger)"}"#, dedupe: "tg:{p0}:dedupe:forged", bytes: 5000)
                let status = try await harness.waitForStatus(forged) { $0["state"] == "rejected" }
                #expect(status["reason"] == "invalid_chain", "\(status)")
                #expect((1...3600).contains(try await harness.redis.send("TTL", harness.keys.job(forged)).int ?? -1))
                #expect((1...3600).contains(try await harness.redis.send("TTL", "tg:{p0}:dedupe:forged").int ?? -1))

                let client = Job(
                    id: Job.newID(), kind: .receipt, payload: Array("bm90IGEgcmVjZWlwdA==".utf8), source: .client,
                    userID: "user-1", receivedAtMilliseconds: 1, countedBytes: 7, dedupeKey: "tg:{p0}:dedupe:client")
                _ = try await harness.redis.send(RedisCommand("SET", "tg:{p0}:dedupe:client", client.id, "EX", 86_400))
                _ = try await harness.redis.xadd(harness.keys.jobs().stream, fields: client.fields)
                try await harness.waitForStatus(client.id) { $0["state"] == "rejected" }
                #expect((1...3600).contains(try await harness.redis.send("TTL", harness.keys.job(client.id)).int ?? -1))
                #expect((1...3600).contains(try await harness.redis.send("TTL", "tg:{p0}:dedupe:client").int ?? -1))

                let held = try await harness.redis.hgetall(harness.keys.backlog())
                #expect(held == ["apple.jobs": "0", "apple.bytes": "0", "client.jobs": "0", "client.bytes": "0"], "\(held)")
            }
        }
    }

    /// An Apple-source job as ingest writes it: counted in the backlog and with its dedupe key.
    static func enqueue(_ harness: VerifierHarness, _ payload: String, dedupe: String, bytes: Int? = nil) async throws -> String {
        let job = Job(
            id: Job.newID(), kind: .notificationV2, payload: Array(payload.utf8), source: .apple,
            receivedAtMilliseconds: Int64(Date().timeIntervalSince1970 * 1000), countedBytes: bytes, dedupeKey: dedupe)
        _ = try await harness.redis.send(RedisCommand("SET", dedupe, job.id, "EX", 86_400))
        _ = try await harness.redis.xadd(harness.keys.jobs().stream, fields: job.fields)
        return job.id
    }
}
