import Core
import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification

/// One acknowledgement gate and one status writer (`Lua/jobs.lua`), against a real redis-server: every writer of a
/// job's status, in Swift or Lua, goes through `write_status`, whose field names agree with ``JobStatus/Field``
/// (written through Lua, read through ``JobStatus``), and which announces a final state in one format.
@Suite struct JobStatusWritersTests {
    static let keys = Keys(prefix: "tg")

    static func connection(_ server: RedisServer) async throws -> RedisConnection {
        let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
        try await redis.connect()
        return redis
    }

    /// A pending entry of a jobs stream with a one-consumer group, to acknowledge.
    static func pendingEntry(_ redis: RedisConnection, stream: String) async throws -> String {
        _ = try await redis.send("XGROUP", "CREATE", stream, "g", "$", "MKSTREAM")
        let id = try #require(try await redis.send("XADD", stream, "*", "job.id", "j1").string)
        _ = try await redis.send("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", stream, ">")
        return id
    }

    @Test func everyFieldIsWrittenThroughLuaAndReadThroughJobStatus() async throws {
        try await withRedisServer { server in
            let redis = try await Self.connection(server)
            defer { redis.close() }
            let listener = RedisSubscriber(
                configuration: server.configuration(), channels: [Self.keys.jobResultsChannel], logger: testLogger)
            listener.start()
            defer { listener.close() }
            var events = listener.events.makeAsyncIterator()
            guard case .subscribed? = await events.next() else {
                Issue.record("no subscription")
                return
            }
            let stream = Self.keys.jobs().stream
            let id = try await Self.pendingEntry(redis, stream: stream)
            var status = JobStatus(
                jobID: "j1", state: .rejected, kind: .receipt, userID: "alice", source: "client", reason: "receipt_malformed",
                message: "The receipt is not an App Store receipt.", attempt: 3, nextAttemptAtMilliseconds: 7,
                updatedAtMilliseconds: 5, verifiedAtMilliseconds: 6, resultJSON: #"{"outcome":"rejected"}"#)
            status.project = "games"
            let written = Set(status.fields.map(\.0))
            #expect(written == Set(JobStatus.Field.allCases.map(\.rawValue)).subtracting([JobStatus.Field.movedTo.rawValue]))
            let moved = PipelineWrite.status(
                key: Self.keys.job("j1"), jobID: "j1", fields: [(JobStatus.Field.movedTo.rawValue, "3")], clear: [],
                expireSeconds: 60, channel: "")
            #expect(
                try await PipelineFunctions.ackWrite(
                    on: redis, stream: stream, group: "g", id: id, writes: [status.write(keys: Self.keys), moved]))
            let hash = try await redis.hgetall(Self.keys.job("j1"))
            #expect(JobStatus(jobID: "j1", hash: hash) == status)
            #expect(hash[JobStatus.movedToField] == "3")
            #expect(try await redis.send("TTL", Self.keys.job("j1")).int ?? 0 > 0)
            // The final state was announced once, in the one format: the id, a newline, the whole hash as JSON.
            guard case .message(_, let payload)? = await events.next() else {
                Issue.record("no announcement")
                return
            }
            let newline = try #require(payload.firstIndex(of: 0x0a))
            #expect(String(decoding: payload[..<newline], as: UTF8.self) == "j1")
            let members = try #require(JSONValue.read(payload[(newline + 1)...])?.members)
            let carried = members.compactMapValues { $0.string }
            #expect(carried.count == members.count, "every member of the carried hash is a string")
            #expect(JobStatus(jobID: "j1", hash: carried) == status)
            // The gate: the entry is gone, and a second acknowledgement writes nothing.
            #expect(try await redis.xlen(stream) == 0)
            let again = JobStatus(jobID: "j1", state: .fulfilled, updatedAtMilliseconds: 9)
            #expect(
                !(try await PipelineFunctions.ackWrite(
                    on: redis, stream: stream, group: "g", id: id, writes: [again.write(keys: Self.keys)])))
            #expect(try await redis.hgetall(Self.keys.job("j1"))["state"] == "rejected")
        }
    }

    @Test func aNameTheStatusDoesNotHaveIsRefusedBeforeAnythingIsWritten() async throws {
        try await withRedisServer { server in
            let redis = try await Self.connection(server)
            defer { redis.close() }
            let stream = Self.keys.jobs().stream
            let id = try await Self.pendingEntry(redis, stream: stream)
            for (fields, clear) in [([("staet", "queued")], [String]()), ([("state", "finished")], []), ([("state", "queued")], ["nope"])] {
                let write = PipelineWrite.status(
                    key: Self.keys.job("j1"), jobID: "j1", fields: fields, clear: clear, expireSeconds: 60, channel: "")
                await #expect(throws: RedisError.self) {
                    _ = try await PipelineFunctions.ackWrite(on: redis, stream: stream, group: "g", id: id, writes: [write])
                }
            }
            #expect(try await redis.hgetall(Self.keys.job("j1")).isEmpty)
            #expect(try await redis.xlen(stream) == 1, "the entry is still pending: nothing was acknowledged")
        }
    }

    /// The Lua writers of their own steps go through the same writer: the verifier's `verifying` mark and the
    /// redrive of a dead job (which clears the failure's fields).
    @Test func theVerifiersMarkAndARedriveWriteThroughTheOneWriter() async throws {
        try await withRedisServer { server in
            let redis = try await Self.connection(server)
            defer { redis.close() }
            for library in [VerifierFunctions.library, DeadLetterFunctions.library] { try await library.load(on: redis) }
            let key = Self.keys.job("j2")
            #expect(try await VerifierFunctions.markVerifying(on: redis, key: key, attempt: 2, nowMilliseconds: 11))
            var read = try #require(JobStatus(jobID: "j2", hash: try await redis.hgetall(key)))
            #expect(read.state == .verifying && read.attempt == 2 && read.updatedAtMilliseconds == 11)

            let streams = Self.keys.jobs()
            _ = try await redis.send(
                "HSET", key, "state", "dead", "reason", "retries_exhausted", "message", "m", "next.at", "1")
            let dead = try #require(
                try await redis.send("XADD", streams.deadLetter, "*", "job.id", "j2", "job.kind", "receipt", "reason", "x").string)
            let redriven = try await DeadLetterFunctions.redrive(
                on: redis, keys: streams, statusKey: key, backlogKey: Self.keys.partitionKey(0, "backlog", "b"), deadID: dead,
                jobID: "j2", nowMilliseconds: 12)
            #expect(redriven != nil)
            read = try #require(JobStatus(jobID: "j2", hash: try await redis.hgetall(key)))
            #expect(read.state == .queued && read.updatedAtMilliseconds == 12)
            #expect(read.reason == nil && read.message == nil && read.nextAttemptAtMilliseconds == nil && read.attempt == nil)
        }
    }
}
