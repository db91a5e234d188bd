import Core
import Foundation
import Hummingbird
import HummingbirdTesting
import Pipeline
import Redis
import TestSupport
import Testing

@testable import ingest

@Suite struct ClientSubmissionTests {
    @Test func receiptRestoresPlusAndTheSameSubmissionGivesTheSameJob() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                let alice = try await IngestHarness.userHeaders("alice")
                let body = ByteBuffer(string: #"{"receipt":"AB C\nD+EF","orderNo":"ord_1"}"#)
                let first = try await client.execute(uri: "/v1/receipts", method: .post, headers: alice, body: body)
                #expect(first.status == .accepted)
                let jobID = try #require(IngestHarness.json(first)["jobId"]?.string)
                let again = try await client.execute(uri: "/v1/receipts", method: .post, headers: alice, body: body)
                #expect(IngestHarness.json(again)["jobId"]?.string == jobID)
                let bob = try await IngestHarness.userHeaders("bob")
                let other = try await client.execute(uri: "/v1/receipts", method: .post, headers: bob, body: body)
                #expect(IngestHarness.json(other)["jobId"]?.string != jobID)

                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let entries = try await redis.xrange("tg:{p0}:jobs")
                #expect(entries.count == 2)
                let job = try Job(entry: try #require(entries.first))
                #expect(job.payload == Array("AB+CD+EF".utf8))
                #expect(job.userID == "alice")
                #expect(job.orderNo == "ord_1")
                #expect(job.kind == .receipt)
            }
        }
    }

    @Test func transactionIsEnqueuedForItsUser() async throws {
        try await withRedisServer { server in
            let jws = try IngestHarness.transactionJWS()
            try await IngestHarness.withApp(server) { client in
                let response = try await client.execute(
                    uri: "/v1/transactions", method: .post, headers: try await IngestHarness.userHeaders("carol"),
                    body: ByteBuffer(string: "{\"signedTransaction\":\"\(jws)\"}"))
                #expect(response.status == .accepted)
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let job = try Job(entry: try #require(try await redis.xrange("tg:{p0}:jobs").first))
                #expect(job.kind == .transaction)
                #expect(job.payload == Array(jws.utf8))
                #expect(job.userID == "carol")
            }
        }
    }

    @Test func missingOrBadAuthIsRefusedAndLeavesNothing() async throws {
        try await withRedisServer { server in
            let jws = try IngestHarness.transactionJWS()
            let body = "{\"signedTransaction\":\"\(jws)\"}"
            let expired = try await IngestHarness.token(user: "alice", expiresIn: -120)
            let withinLeeway = try await IngestHarness.token(user: "alice", expiresIn: -30)
            let wrongSecret = try await IngestHarness.token(user: "alice", secret: "another-secret-0123456789abcdefghijklmn")
            let none =
                IngestHarness.base64URL(#"{"alg":"none","typ":"JWT"}"#) + "."
                + IngestHarness.base64URL(#"{"sub":"alice","exp":4102444800}"#) + "."
            // A header naming `alg` twice: readers disagree on which counts, so it is refused whatever the signature.
            let withinLeewayParts = withinLeeway.split(separator: ".")
            let twoAlgs = IngestHarness.base64URL(#"{"alg":"none","alg":"HS256"}"#) + ".\(withinLeewayParts[1]).\(withinLeewayParts[2])"
            let refused: [(String, HTTPFields)] = [
                ("no auth", [:]),
                ("alg twice", IngestHarness.bearer(twoAlgs)),
                ("expired", IngestHarness.bearer(expired)),
                ("wrong secret", IngestHarness.bearer(wrongSecret)),
                ("alg none", IngestHarness.bearer(none)),
                ("garbage", IngestHarness.bearer("not-a-token")),
                ("basic", [.authorization: "Basic YTpi"]),
            ]
            try await IngestHarness.withApp(server) { client in
                for (name, headers) in refused {
                    let response = try await client.execute(
                        uri: "/v1/transactions", method: .post, headers: headers, body: ByteBuffer(string: body))
                    #expect(response.status == .unauthorized, "\(name)")
                    #expect(IngestHarness.errorCode(response) == "unauthorized", "\(name)")
                }
                let service = try await client.execute(
                    uri: "/v1/transactions", method: .post, headers: IngestHarness.bearer(IngestHarness.serviceKey),
                    body: ByteBuffer(string: body))
                #expect(service.status == .forbidden)
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                #expect(try await IngestHarness.dbsize(redis) == 0)
                // Tokens 30 s past their expiry, made just before use: the 60 s leeway must not run out while a loaded
                // machine runs the requests above.
                let leewayToken = try await IngestHarness.token(user: "alice", expiresIn: -30)
                let leeway = try await client.execute(
                    uri: "/v1/transactions", method: .post, headers: IngestHarness.bearer(leewayToken), body: ByteBuffer(string: body))
                #expect(leeway.status == .accepted)
                // Blanks around the token are not part of it.
                let paddedToken = try await IngestHarness.token(user: "alice", expiresIn: -30)
                let padded = try await client.execute(
                    uri: "/v1/receipts", method: .post, headers: [.authorization: "Bearer \t \(paddedToken) \t"],
                    body: ByteBuffer(string: #"{"receipt":"AAAA"}"#))
                #expect(padded.status == .accepted)
            }
        }
    }

    @Test func malformedSubmissionsAreRefusedAndLeaveNothing() async throws {
        try await withRedisServer { server in
            let jws = try IngestHarness.transactionJWS()
            let parts = jws.split(separator: ".")
            let hs256 = IngestHarness.base64URL(#"{"alg":"HS256","x5c":["a","b","c"]}"#) + ".\(parts[1]).\(parts[2])"
            let cases: [(String, String, String)] = [
                ("/v1/transactions", "{\"signedTransaction\":\"\(parts[0]).\(parts[1])\"}", "invalid_jws"),
                ("/v1/transactions", "{\"signedTransaction\":\"\(hs256)\"}", "unsupported_algorithm"),
                ("/v1/transactions", "[1,2", "invalid_json"),
                // A member twice: readers disagree on which counts (first, last), so the body is refused whole.
                ("/v1/transactions", "{\"signedTransaction\":\"\(jws)\",\"signedTransaction\":\"x.y.z\"}", "invalid_json"),
                ("/v1/receipts", #"{"receipt":"AAAA","receipt":"BBBB"}"#, "invalid_json"),
                ("/v1/transactions", "{\"signedTransaction\":\"\(jws)\",\"orderNo\":7}", "invalid_request"),
                ("/v1/receipts", #"{"receipt":"***"}"#, "invalid_receipt"),
                ("/v1/receipts", #"{"receipt":""}"#, "invalid_receipt"),
                ("/v1/receipts", "{\"receipt\":\"\(String(repeating: "A", count: (512 << 10) + 4))\"}", "payload_too_large"),
                ("/v1/receipts?wait=31", #"{"receipt":"AAAA"}"#, "invalid_request"),
            ]
            try await IngestHarness.withApp(server) { client in
                let headers = try await IngestHarness.userHeaders("alice")
                for (uri, body, code) in cases {
                    let response = try await client.execute(uri: uri, method: .post, headers: headers, body: ByteBuffer(string: body))
                    #expect((400..<500).contains(Int(response.status.code)), "\(code)")
                    #expect(IngestHarness.errorCode(response) == code)
                }
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                #expect(try await IngestHarness.dbsize(redis) == 0)
            }
        }
    }

    /// A stand-in fulfiller: waits (up to 4 s) for the first job ingest enqueues, runs `act` with its id, and
    /// returns the id ("" when no job came).
    static func actOnFirstJob(
        _ redis: RedisConnection, _ act: @escaping @Sendable (String) async throws -> Void
    ) -> Task<String, any Error> {
        Task {
            for _ in 0..<2000 {
                if let entry = try await redis.xrange("tg:{p0}:jobs").first, let jobID = entry.string(Job.Field.id) {
                    try await act(jobID)
                    return jobID
                }
                try await Task.sleep(for: .milliseconds(2))
            }
            return ""
        }
    }

    /// `?wait` answers with the final status as soon as a (test) fulfiller writes it and publishes the job id:
    /// at once (the signal may arrive before the request waits: it is remembered) or later.
    @Test(arguments: [0, 300])
    func waitReturnsTheResultOnceTheFulfillerPublishesIt(delayMilliseconds: Int) async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                let headers = try await IngestHarness.userHeaders("alice")
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let fulfiller = Self.actOnFirstJob(redis) { jobID in
                    try await Task.sleep(for: .milliseconds(delayMilliseconds))
                    let status = JobStatus(
                        jobID: jobID, state: .fulfilled, updatedAtMilliseconds: 1, resultJSON: #"{"coins":100}"#)
                    var arguments: [any RedisArgumentConvertible] = ["tg:{p0}:job:\(jobID)"]
                    for (name, value) in status.fields { arguments += [name, value] }
                    _ = try await redis.send(RedisCommand("HSET", arguments: arguments))
                    _ = try await redis.send("PUBLISH", "tg:job-results", jobID)
                }
                let started = ContinuousClock.now
                let response = try await client.execute(
                    uri: "/v1/receipts?wait=30", method: .post, headers: headers, body: ByteBuffer(string: #"{"receipt":"AAAA"}"#))
                let elapsed = ContinuousClock.now - started
                let jobID = try await fulfiller.value
                #expect(response.status == .ok)
                let json = IngestHarness.json(response)
                #expect(json["jobId"]?.string == jobID)
                #expect(json["status"]?.string == "fulfilled")
                #expect(json["result"]?["coins"]?.int == 100)
                #expect(elapsed < .seconds(15), "answered after \(elapsed): at the 30 s deadline, not at the result")
            }
        }
    }

    /// The ledger's final write publishes the job hash with the job id: `?wait` answers from it without reading
    /// the hash back. Here the hash itself still says `queued`, so only the carried status can end the wait early;
    /// a carried status that is not final is not taken (the hash is read instead).
    @Test func aFinalStatusCarriedByTheSignalIsAnsweredWithoutAReadBack() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                let headers = try await IngestHarness.userHeaders("alice")
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                @Sendable func carried(_ status: JobStatus) throws -> String {
                    let object = JSONValue.object(Dictionary(uniqueKeysWithValues: status.fields.map { ($0.0, .string($0.1)) }))
                    return status.jobID + "\n" + String(decoding: object.data, as: UTF8.self)
                }
                let fulfiller = Self.actOnFirstJob(redis) { jobID in
                    try await Task.sleep(for: .milliseconds(100))
                    let verifying = JobStatus(jobID: jobID, state: .verifying, updatedAtMilliseconds: 1)
                    _ = try await redis.send("PUBLISH", "tg:job-results", try carried(verifying))
                    try await Task.sleep(for: .milliseconds(100))
                    let final = JobStatus(
                        jobID: jobID, state: .fulfilled, updatedAtMilliseconds: 2, resultJSON: #"{"coins":42}"#)
                    _ = try await redis.send("PUBLISH", "tg:job-results", try carried(final))
                }
                let started = ContinuousClock.now
                let response = try await client.execute(
                    uri: "/v1/receipts?wait=30", method: .post, headers: headers, body: ByteBuffer(string: #"{"receipt":"AAAA"}"#))
                let jobID = try await fulfiller.value
                #expect(response.status == .ok)
                let json = IngestHarness.json(response)
                #expect(json["jobId"]?.string == jobID)
                #expect(json["status"]?.string == "fulfilled")
                #expect(json["result"]?["coins"]?.int == 42)
                #expect(ContinuousClock.now - started < .seconds(15), "answered at the deadline, not from the message")
                // The hash was never written by the test: it still holds ingest's own `queued`.
                #expect(try await redis.send("HGET", "tg:{p0}:job:\(jobID)", "state").string == "queued")
            }
        }
    }

    /// The same submission again with `?wait`: no new job; the answer is the first job's status, read at once
    /// (it is final already, so no signal will ever come for it).
    @Test func aDuplicateWithWaitAnswersTheFirstJobsFinalStatus() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                let headers = try await IngestHarness.userHeaders("alice")
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let body = #"{"receipt":"QUJDRA=="}"#
                let first = try await client.execute(
                    uri: "/v1/receipts", method: .post, headers: headers, body: ByteBuffer(string: body))
                let jobID = try #require(IngestHarness.json(first)["jobId"]?.string)
                let status = JobStatus(
                    jobID: jobID, state: .fulfilled, updatedAtMilliseconds: 1, resultJSON: #"{"coins":7}"#)
                var arguments: [any RedisArgumentConvertible] = ["tg:{p0}:job:\(jobID)"]
                for (name, value) in status.fields { arguments += [name, value] }
                _ = try await redis.send(RedisCommand("HSET", arguments: arguments))
                let started = ContinuousClock.now
                let again = try await client.execute(
                    uri: "/v1/receipts?wait=20", method: .post, headers: headers, body: ByteBuffer(string: body))
                #expect(again.status == .ok)
                let json = IngestHarness.json(again)
                #expect(json["jobId"]?.string == jobID)
                #expect(json["result"]?["coins"]?.int == 7)
                #expect(ContinuousClock.now - started < .seconds(10), "read at once, not at the deadline")
                #expect(try await redis.xrange("tg:{p0}:jobs").count == 1)
            }
        }
    }

    @Test func waitAnswers202WithTheCurrentStatusAtTheDeadline() async throws {
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                let started = ContinuousClock.now
                let response = try await client.execute(
                    uri: "/v1/receipts?wait=1", method: .post, headers: try await IngestHarness.userHeaders("alice"),
                    body: ByteBuffer(string: #"{"receipt":"AAAA"}"#))
                #expect(response.status == .accepted)
                #expect(IngestHarness.json(response)["status"]?.string == "queued")
                #expect(ContinuousClock.now - started >= .seconds(1))
            }
        }
    }
}
