import AppStore
import Foundation
import HTTPClient
import Pipeline
import Redis
import TestSupport
import Testing
import Webhooks

/// Issue 42 item 6: what the notifier keeps per endpoint is bounded. Dead letters are capped (`MAXLEN ~`, like the
/// pipeline's) and what the cap drops is counted; cursors of subjects with nothing pending are forgotten.
@Suite(.timeLimit(.minutes(1)))
struct WebhookBoundsTests {
    static let group = "webhook:crm"

    private func keys(_ rig: NotifierRig, user: String) async throws -> WebhookKeys {
        let keys = rig.keys.webhook("crm", partition: rig.keys.partition(ofUser: user))
        _ = try await rig.redis.xgroupCreate(keys.stream, group: Self.group, startID: "0", makeStream: true)
        return keys
    }

    @Test func deadLettersAreCappedAndWhatTheCapDropsIsCounted() async throws {
        try await NotifierRig.with(partitions: 1) { rig in
            // Small stream nodes, so that `MAXLEN ~` (which drops whole nodes) trims close to the cap.
            _ = try await rig.redis.send(RedisCommand("CONFIG", "SET", "stream-node-max-entries", "4"))
            let keys = try await keys(rig, user: "u0")
            for index in 0..<30 { try await rig.writer.append(user: "u\(index)") }
            let later = Int64(Date().timeIntervalSince1970 * 1000) + 60_000
            // A minute later every one is past a 1 s horizon: the pull dead-letters them itself (nothing taken).
            let pulled = try await NotifierFunctions.pull(
                on: rig.redis, keys: keys, group: Self.group, consumer: "c", read: 100, take: 0, now: later, token: "a",
                lease: .seconds(1), recheck: .seconds(1), horizon: .seconds(1), deadMax: 10)
            #expect(pulled.expired == 30)
            let length = try await rig.redis.xlen(keys.dead)
            #expect(length >= 10 && length < 16, "\(length) dead letters kept for a cap of 10")
            #expect(pulled.dropped == 30 - length)
            // The newest are the ones kept.
            let kept = try await rig.redis.xrange(keys.dead, count: 100).compactMap { $0.string("user") }
            #expect(kept.last == "u29")
        }
    }

    /// The notifier binary: `TOLLGATE_WEBHOOK_DEAD_MAX` caps, and `/metrics` counts what the cap dropped.
    @Test func theNotifierCountsTheDeadLettersItsCapDrops() async throws {
        try await NotifierRig.with(partitions: 1) { rig in
            _ = try await rig.redis.send(RedisCommand("CONFIG", "SET", "stream-node-max-entries", "4"))
            for index in 0..<30 { try await rig.writer.append(user: "u\(index)") }
            let (down, metricsPort) = (try ChildProcess.freePort(), try ChildProcess.freePort())
            let notifier = try ChildProcess.start(
                "notifier",
                environment: [
                    "TOLLGATE_REDIS_URL": rig.server.url, "TOLLGATE_METRICS_HOST": "127.0.0.1",
                    "TOLLGATE_METRICS_PORT": String(metricsPort), "TOLLGATE_WEBHOOK_URL": "http://127.0.0.1:\(down)/hook",
                    "TOLLGATE_WEBHOOK_SECRETS": longSecret, "TOLLGATE_WEBHOOK_HORIZON": "1s", "TOLLGATE_WEBHOOK_TIMEOUT": "1s",
                    "TOLLGATE_WEBHOOK_DEAD_MAX": "10",
                ])
            let dead = rig.keys.webhook("default", partition: rig.keys.partitions.first ?? .first).dead
            let transport = WebhookSender.makeTransport(connectionsPerHost: 1)
            let url = try #require(URL(string: "http://127.0.0.1:\(metricsPort)/metrics"))
            var scraped = ""
            let counted = await eventually(timeout: .seconds(20), interval: .milliseconds(200)) {
                guard (try? await rig.deadCount("default")) ?? 0 > 0, (try? await rig.redis.xlen(dead)) ?? 0 < 30,
                    let response = try? await transport.send(HTTPTransportRequest(method: .get, url: url, timeout: .seconds(2)))
                else { return false }
                scraped = String(decoding: response.body, as: UTF8.self)
                return scraped.contains(#"tollgate_webhook_dead_dropped_total{endpoint="default"}"#)
            }
            #expect(await notifier.terminate(timeout: .seconds(15)))
            #expect(counted, "\(scraped.split(separator: "\n").filter { $0.contains("tollgate_webhook") })")
        }
    }

    @Test func aCursorIsForgottenOnceItsSubjectHasNothingPending() async throws {
        try await NotifierRig.with(partitions: 1) { rig in
            let keys = try await keys(rig, user: "u1")
            let first = try await rig.writer.append(user: "u1")
            try await Task.sleep(for: .milliseconds(5))
            try await rig.writer.append(user: "u2")
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            func pull(at time: Int64, horizon: Duration) async throws -> NotifierFunctions.Pulled {
                try await NotifierFunctions.pull(
                    on: rig.redis, keys: keys, group: Self.group, consumer: "c", read: 10, take: 10, now: time, token: "t\(time)",
                    lease: .seconds(30), recheck: .seconds(300), horizon: horizon)
            }
            let taken = try await pull(at: now, horizon: .seconds(1)).taken
            #expect(taken.count == 2)
            let u1 = try #require(taken.first { $0.entry.id == first.entryID })
            try await NotifierFunctions.finish(
                on: rig.redis, keys: keys, group: Self.group, entryID: u1.entry.id, subject: "u1", seq: 1, token: u1.token,
                outcome: .delivered, now: now + 1)
            #expect(try await rig.cursor("crm", user: "u1") == 1)
            // Quiet for the horizon and a lease: u1 has nothing pending and is forgotten; u2's event is still in flight
            // (its lease held), so u2 keeps its cursor.
            let quiet = try await pull(at: now + 32_000, horizon: .seconds(1))
            #expect(quiet.forgotten == 1)
            #expect(try await rig.redis.send(RedisCommand("HEXISTS", keys.cursor, "u1")).int == 0)
            #expect(try await rig.redis.send(RedisCommand("HEXISTS", keys.cursor, "u2")).int == 1)
            #expect(try await rig.redis.send(RedisCommand("ZSCORE", keys.seen, "u1")).string == nil)
            // u1's next event starts its cursor again where it is, and goes.
            let second = try await rig.writer.append(user: "u1")
            let next = try await pull(at: now + 33_000, horizon: .seconds(3600)).taken
            #expect(next.map(\.entry.id) == [second.entryID])
            #expect(try await rig.cursor("crm", user: "u1") == 1)
        }
    }
}
