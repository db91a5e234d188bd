import Pipeline
import Redis
import TestSupport
import Testing

@Suite struct PipelineFunctionsTests {
    let keys = Keys(prefix: "t").jobs()
    let output = Keys(prefix: "t").verified().stream
    let status = Keys(prefix: "t").partitionKey(0, "job", "j1")

    /// Adds one entry and delivers it to consumer "c" of group "g"; returns its id.
    func deliveredEntry(_ pool: RedisPool, fields: [(String, [UInt8])]) async throws -> String {
        _ = try await pool.xgroupCreate(keys.stream, group: "g")
        let id = try #require(try await pool.xadd(keys.stream, fields: fields))
        let read = try await pool.xreadgroup(group: "g", consumer: "c", stream: keys.stream, count: 10, block: nil)
        #expect(read.map(\.id) == [id])
        return id
    }

    @Test func ackWriteAppliesWritesOnlyOnce() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let id = try await deliveredEntry(pool, fields: [("job", Array("j1".utf8))])

            _ = try await pool.send("SET", "t:dedupe", "j1", "EX", "86400")
            let first = try await PipelineFunctions.ackWrite(
                on: pool, stream: keys.stream, group: "g", id: id,
                writes: [
                    .xadd(stream: output, strings: [("job", "j1"), ("status", "verified")]),
                    .hset(key: status, strings: [("status", "verified")], expireSeconds: 600),
                    .publish(channel: "t:jobs", string: "j1"),
                    .hincrby(key: "t:backlog", field: "apple.bytes", delta: -300),
                    .shortenExpiry(key: "t:dedupe", seconds: 60),
                    .shortenExpiry(key: "t:missing", seconds: 60),
                ])
            #expect(first)
            #expect(try await pool.xlen(output) == 1)
            #expect(try await pool.send("HGET", status, "status").string == "verified")
            let ttl = try #require(try await pool.send("TTL", status).int)
            #expect(ttl > 0 && ttl <= 600)
            #expect(try await pool.xpendingSummary(keys.stream, group: "g").count == 0)
            #expect(try await pool.send("HGET", "t:backlog", "apple.bytes").string == "-300")
            let shortened = try #require(try await pool.send("TTL", "t:dedupe").int)
            #expect(shortened > 0 && shortened <= 60, "EXPIRE … LT shortens")
            #expect(try await pool.send("EXISTS", "t:missing").int == 0, "EXPIRE creates nothing")
            // The acknowledged entry is deleted in the same step: a finished job's payload is not kept.
            #expect(try await pool.xrange(keys.stream).isEmpty)

            // Redelivery or a late duplicate: the XACK gate refuses, nothing is written.
            let second = try await PipelineFunctions.ackWrite(
                on: pool, stream: keys.stream, group: "g", id: id,
                writes: [
                    .xadd(stream: output, strings: [("job", "j1"), ("status", "again")]),
                    .hset(key: status, strings: [("status", "again")]),
                ])
            #expect(!second)
            #expect(try await pool.xlen(output) == 1)
            #expect(try await pool.send("HGET", status, "status").string == "verified")
        }
    }

    @Test func malformedWritesChangeNothing() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let id = try await deliveredEntry(pool, fields: [("job", Array("j1".utf8))])
            // Key index 1 is the consumed stream itself, which writes may not target; and a field count
            // running past ARGV. Both must fail before the XACK.
            await #expect(throws: RedisError.self) {
                _ = try await pool.fcall(
                    PipelineFunctions.library.function("ack_write"), keys: [keys.stream],
                    arguments: ["g", id, "1", "XADD", "1", "1", "a", "b"])
            }
            await #expect(throws: RedisError.self) {
                _ = try await pool.fcall(
                    PipelineFunctions.library.function("ack_write"), keys: [keys.stream, output],
                    arguments: ["g", id, "1", "XADD", "2", "3", "a", "b"])
            }
            #expect(try await pool.xpendingSummary(keys.stream, group: "g").count == 1)
            #expect(try await pool.xlen(output) == 0)
        }
    }

    @Test func ackRetryStoresTheEntryAndPromoteMovesItBackWhenDue() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let binary: [UInt8] = [0, 255, 10, 13, 0, 1]
            let id = try await deliveredEntry(pool, fields: [("job", Array("j1".utf8)), ("blob", binary)])

            let scheduled = try await PipelineFunctions.ackRetry(
                on: pool, stream: keys, group: "g", id: id, dueMilliseconds: 5_000, nextAttempt: 2,
                error: "apple 503", writes: [.hset(key: status, strings: [("status", "retrying")])]
            )
            #expect(scheduled)
            #expect(try await pool.xpendingSummary(keys.stream, group: "g").count == 0)
            let members = try #require(try await pool.send("ZRANGE", keys.retry, "0", "-1", "WITHSCORES").array)
            #expect(members.count == 2)
            #expect(members.last?.int == 5_000)
            #expect(try await pool.send("HGET", status, "status").string == "retrying")
            // A duplicate retry of the same delivery is refused.
            #expect(
                try await !PipelineFunctions.ackRetry(
                    on: pool, stream: keys, group: "g", id: id, dueMilliseconds: 1, nextAttempt: 2, error: "dup"))
            #expect(try await pool.send("ZCARD", keys.retry).int == 1)

            #expect(try await PipelineFunctions.promote(on: pool, stream: keys, nowMilliseconds: 4_999, limit: 10) == 0)
            #expect(try await PipelineFunctions.promote(on: pool, stream: keys, nowMilliseconds: 5_000, limit: 10) == 1)
            #expect(try await pool.send("ZCARD", keys.retry).int == 0)
            // The scheduled entry was deleted with its acknowledgement; only the promoted copy is left.
            let entries = try await pool.xrange(keys.stream)
            #expect(entries.count == 1)
            let promoted = try #require(entries.last)
            #expect(promoted.id != id)
            #expect(promoted["job"] == "j1")
            #expect(promoted.fields["blob"] == binary)
            #expect(promoted[PipelineFunctions.attemptField] == "2")
            #expect(promoted[PipelineFunctions.errorField] == "apple 503")
        }
    }

    @Test func ackDeadLetterCopiesTheEntryWithItsHistory() async throws {
        try await withRedisServer { server in
            let pool = try await connectedPool(server)
            defer { pool.close() }
            let id = try await deliveredEntry(pool, fields: [("job", Array("j1".utf8))])

            #expect(
                try await PipelineFunctions.ackDeadLetter(
                    on: pool, stream: keys, group: "g", id: id, reason: "bad receipt", attempts: 3,
                    deadAtMilliseconds: 1234))
            #expect(
                try await !PipelineFunctions.ackDeadLetter(
                    on: pool, stream: keys, group: "g", id: id, reason: "again", attempts: 3, deadAtMilliseconds: 1))
            let dead = try await pool.xrange(keys.deadLetter)
            #expect(dead.count == 1)
            let entry = try #require(dead.first)
            #expect(entry["job"] == "j1")
            #expect(entry["source.stream"] == keys.stream)
            #expect(entry["source.id"] == id)
            #expect(entry["reason"] == "bad receipt")
            #expect(entry["attempts"] == "3")
            #expect(entry["dead.at"] == "1234")
            #expect(try await pool.xpendingSummary(keys.stream, group: "g").count == 0)
        }
    }

    @Test func keysShareTheStreamsHashTag() {
        let keys = Keys(prefix: "tg").jobs(partition: 3)
        #expect(keys.stream == "tg:{p3}:jobs")
        #expect(keys.retry == "tg:{p3}:jobs:retry")
        #expect(keys.deadLetter == "tg:{p3}:jobs:dead")
        #expect(Keys().partitionKey(3, "job", "abc") == "tg:{p3}:job:abc")
    }
}
