import Foundation
import Pipeline
import Redis
import TestSupport
import Testing

/// `tollctl webhooks`, the real binary against a real Redis and a local receiver.
@Suite(.timeLimit(.minutes(2)))
struct WebhooksCommandTests {
    @Test func testSendsASignedEventListDeadAndRedriveWork() async throws {
        try await withRedisServer { server in
            try await withStubServer { receiver in
                await receiver.respond(to: "/hook", with: [StubResponse(status: 204)])
                let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
                try await redis.connect()
                defer { redis.close() }
                let environment = [
                    "TOLLGATE_REDIS_URL": server.url, "TOLLGATE_WEBHOOK_URL": receiver.url("/hook").absoluteString,
                    "TOLLGATE_WEBHOOK_SECRETS": "whsec_new_0123456789abcdefghijklmnop,whsec_old_0123456789abcdefghijklmnop",
                ]

                let test = try await ChildProcess.run("tollctl", arguments: ["webhooks", "test"], environment: environment)
                #expect(test.status == 0, "\(test.output)")
                #expect(test.output.contains("HTTP 204"))
                let sent = try #require(await receiver.requests(to: "/hook").first)
                #expect(sent.headers["tollgate-event-id"]?.hasPrefix("test-") == true)
                // One v1= per secret: a rotation.
                #expect(sent.headers["tollgate-signature"]?.components(separatedBy: "v1=").count == 3)
                #expect(sent.headers["content-type"] == "application/json")

                // A dead letter as the notifier writes it.
                let dead = "tg:{p0}:webhook:default:dead"
                let body = #"{"id":"evt_1","type":"purchase","userId":"alice","seq":1}"#
                _ = try await redis.send(
                    RedisCommand(
                        "XADD", dead, "*", "event.version", "2", "event.id", "evt_1", "seq", "1", "user", "alice", "event", body,
                        "source.id", "1700000000000-0", "reason", "horizon: status_500", "attempts", "12", "dead.at", "1700000100000"))
                let closed = try await ChildProcess.run("tollctl", arguments: ["webhooks", "list"], environment: environment)
                #expect(closed.output.contains("replicas=0  breaker=closed"), "\(closed.output)")
                // A replica alive, and its breaker open for a minute, as the notifier's `fleet` call writes them.
                let now = Int64(Date().timeIntervalSince1970 * 1000)
                _ = try await redis.send(RedisCommand("ZADD", "tg:{p0}:webhook:default:replicas", now, "r1"))
                _ = try await redis.send(RedisCommand("SET", "tg:{p0}:webhook:default:breaker", now + 60_000, "PX", 60_000))
                let listed = try await ChildProcess.run("tollctl", arguments: ["webhooks", "list"], environment: environment)
                #expect(listed.output.contains("secrets=2  types=*"), "\(listed.output)")
                #expect(listed.output.contains("dead=1"))
                #expect(listed.output.contains("replicas=1  breaker=open("), "\(listed.output)")
                #expect(!listed.output.contains("whsec_"))
                let letters = try await ChildProcess.run("tollctl", arguments: ["webhooks", "dead"], environment: environment)
                #expect(letters.output.contains("event=evt_1  user=alice  seq=1  attempts=12"), "\(letters.output)")

                let redrive = try await ChildProcess.run("tollctl", arguments: ["webhooks", "redrive"], environment: environment)
                #expect(redrive.status == 0, "\(redrive.output)")
                #expect(redrive.output.contains("delivered=1  failed=0  unreadable=0"))
                #expect(try await redis.xlen(dead) == 0)
                let redriven = await receiver.requests(to: "/hook").last
                #expect(redriven.map { String(decoding: $0.body, as: UTF8.self) } == body)
                #expect(redriven?.headers["tollgate-event-id"] == "evt_1")
            }
        }
    }

    /// Issue 42 item 6: an endpoint's dead letters are purgeable by name, in every partition, configured or not (an
    /// endpoint taken out of the configuration), and only that endpoint's.
    @Test func purgeDeletesOneEndpointsDeadLettersInEveryPartition() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            let environment = [
                "TOLLGATE_REDIS_URL": server.url, "TOLLGATE_PARTITIONS": "2",
                "TOLLGATE_WEBHOOK_URL": "https://hooks.example.com/t", "TOLLGATE_WEBHOOK_SECRETS": String(repeating: "k", count: 32),
            ]
            let keys = Keys(prefix: "tg", layout: try PartitionLayout(count: 2))
            let (first, second) = (keys.partitions[0], keys.partitions[1])
            let gone = [keys.partitionKey(first, "webhook", "gone", "dead"), keys.partitionKey(second, "webhook", "gone", "dead")]
            let kept = keys.partitionKey(first, "webhook", "default", "dead")
            for key in [gone[0], gone[1], gone[1], kept] {
                _ = try await redis.send(
                    RedisCommand("XADD", key, "*", "event.version", "2", "event.id", "evt_1", "seq", "1", "reason", "horizon: expired"))
            }
            let purged = try await ChildProcess.run(
                "tollctl", arguments: ["webhooks", "purge", "--endpoint", "gone"], environment: environment)
            #expect(purged.status == 0, "\(purged.output)")
            #expect(purged.output.contains("purged=3"), "\(purged.output)")
            #expect(try await redis.xlen(gone[0]) == 0)
            #expect(try await redis.xlen(gone[1]) == 0)
            #expect(try await redis.xlen(kept) == 1)
            // A name that cannot be an endpoint's is refused, touching nothing.
            let refused = try await ChildProcess.run(
                "tollctl", arguments: ["webhooks", "purge", "--endpoint", "*"], environment: environment)
            #expect(refused.status != 0)
            #expect(try await redis.xlen(kept) == 1)
        }
    }
}
