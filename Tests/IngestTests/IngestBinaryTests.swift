import AppStore
import Core
import Foundation
import HTTPClient
import Pipeline
import Redis
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The real `ingest` executable: stopped with SIGTERM while requests are in flight, it stops accepting
/// connections, finishes what it accepted (a `?wait` submission and an enqueue held up by Redis) and exits 0;
/// its logs, at the most verbose level, never carry a secret, a token, a receipt or a JWS.
@Suite(.serialized)
struct IngestBinaryTests {
    @Test func sigtermFinishesAcceptedRequestsThenExits() async throws {
        try await withRedisServer { server in
            try await IngestProcess.withIngest(redisURL: server.url) { running in
                let ingest = running.process
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }

                // 1. A client submission waiting for its result (the test plays the fulfiller below).
                let token = try await IngestHarness.token(user: "alice")
                let waiting = Task {
                    try await running.send(
                        .post, "/v1/receipts?wait=25", headers: ["Authorization": "Bearer \(token)"],
                        body: Data(#"{"receipt":"AAAA"}"#.utf8))
                }
                let submitted = try await redis.firstJobID()

                // 2. An Apple notification whose enqueue Redis holds up (writes paused for 4 s): in flight once
                //    Redis holds a command carrying the notification's payload.
                _ = try await redis.send("CLIENT", "PAUSE", "4000", "WRITE")
                let body = try IngestHarness.notificationBody()
                let notification = Task {
                    try await running.send(.post, "/v1/apple/notifications", body: Data(body))
                }
                try await redis.waitForBlockedClients(argumentBytes: body.count / 2)
                #expect(try await redis.xlen("tg:{p0}:jobs") == 1, "the paused enqueue must not have landed yet")

                // 3. SIGTERM: the listener closes while both requests are still open.
                ingest.process.send(SIGTERM)
                #expect(await running.refusesConnections(within: .seconds(10)), "ingest kept accepting after SIGTERM")
                #expect(ingest.process.isRunning, "ingest exited with requests in flight")

                // The paused enqueue completes once Redis takes writes again: 200, and the job is in the stream.
                let notified = try await notification.value
                #expect(notified.status == 200)
                let notifiedJob = try #require(
                    JSONValue.read(notified.body)?["jobId"]?.string)
                let entries = try await redis.xrange("tg:{p0}:jobs")
                #expect(entries.compactMap { $0.string(Job.Field.id) } == [submitted, notifiedJob])

                // The waiting submission still gets its result, published after SIGTERM.
                let status = JobStatus(jobID: submitted, state: .fulfilled, updatedAtMilliseconds: 1, resultJSON: #"{"coins":100}"#)
                var arguments: [any RedisArgumentConvertible] = ["tg:{p0}:job:\(submitted)"]
                for (name, value) in status.fields { arguments += [name, value] }
                _ = try await redis.send(RedisCommand("HSET", arguments: arguments))
                _ = try await redis.send("PUBLISH", "tg:job-results", submitted)
                let answered = try await waiting.value
                #expect(answered.status == 200)
                let json = JSONValue.read(answered.body)
                #expect(json?["jobId"]?.string == submitted)
                #expect(json?["status"]?.string == "fulfilled")

                // Then it exits, successfully.
                #expect(await ingest.process.waitForExit(timeout: .seconds(15)), "ingest did not exit after finishing its requests")
                #expect(ingest.process.terminationStatus == 0)
                #expect(!ingest.process.terminatedBySignal)
            }
        }
    }

    /// A shutdown that overruns `TOLLGATE_SHUTDOWN_GRACE` is ended by the process itself, before any
    /// orchestrator's SIGKILL: with a `?wait=25` submission open and a 1 s grace, ingest is gone within
    /// seconds of SIGTERM (not 25), and the job it accepted is in the stream.
    @Test func shutdownEndsAtItsGraceEvenWithARequestOpen() async throws {
        try await withRedisServer { server in
            try await IngestProcess.withIngest(redisURL: server.url, environment: ["TOLLGATE_SHUTDOWN_GRACE": "1s"]) { running in
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                let token = try await IngestHarness.token(user: "alice")
                let waiting = Task {
                    try? await running.send(
                        .post, "/v1/receipts?wait=25", headers: ["Authorization": "Bearer \(token)"],
                        body: Data(#"{"receipt":"AAAA"}"#.utf8))
                }
                let submitted = try await redis.firstJobID()
                let signalled = ContinuousClock.now
                running.process.process.send(SIGTERM)
                #expect(await running.process.process.waitForExit(timeout: .seconds(15)), "ingest outlived its shutdown grace")
                let took = ContinuousClock.now - signalled
                #expect(took < .seconds(10), "ingest took \(took) to stop with a 1 s grace")
                let answer = await waiting.value
                #expect(answer?.status != 200, "the open ?wait was answered as if its job had finished")
                #expect(try await redis.xrange("tg:{p0}:jobs").compactMap { $0.string(Job.Field.id) } == [submitted])
            }
        }
    }

    @Test func logsNeverCarrySecretsTokensReceiptsOrJWS() async throws {
        try await withRedisServer { server in
            let admin = try await IngestHarness.redis(server)
            defer { admin.close() }
            let password = "redis-password-\(UUID().uuidString)"
            _ = try await admin.send("CONFIG", "SET", "requirepass", password)  // this connection stays authenticated
            try await IngestProcess.withIngest(
                redisURL: "redis://:\(password)@127.0.0.1:\(server.port)",
                environment: ["LOG_LEVEL": "trace"]
            ) { ingest in
                let token = try await IngestHarness.token(user: "alice")
                let forged = try await IngestHarness.token(user: "alice", secret: "another-secret-0123456789abcdefghijkl")
                let wrongKey = "wrong-service-key-\(UUID().uuidString)"
                let receipt = Data((0..<900).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }).base64EncodedString()
                let transaction = try IngestHarness.transactionJWS()
                let notification = try IngestHarness.notificationBody()
                let user = ["Authorization": "Bearer \(token)"]

                // Accepted work, refused credentials, malformed bodies, then a dead Redis.
                #expect(
                    try await ingest.send(.post, "/v1/receipts", headers: user, body: Data(#"{"receipt":"\#(receipt)"}"#.utf8)).status
                        == 202)
                let accepted = try await ingest.send(
                    .post, "/v1/transactions", headers: user,
                    body: Data(#"{"signedTransaction":"\#(transaction)"}"#.utf8))
                #expect(accepted.status == 202)
                let jobID = try #require(JSONValue.read(accepted.body)?["jobId"]?.string)
                #expect(try await ingest.send(.post, "/v1/apple/notifications", body: Data(notification)).status == 200)
                #expect(
                    try await ingest.send(
                        .post, "/v1/receipts", headers: ["Authorization": "Bearer \(forged)"],
                        body: Data(#"{"receipt":"\#(receipt)"}"#.utf8)
                    ).status == 401)
                #expect(
                    try await ingest.send(
                        .post, "/v1/receipts", headers: ["Authorization": "Bearer \(token)x"],
                        body: Data(#"{"receipt":"\#(receipt)"}"#.utf8)
                    ).status == 401)
                #expect(try await ingest.send(.get, "/v1/jobs/\(jobID)", headers: ["X-Api-Key": IngestHarness.serviceKey]).status == 200)
                #expect(try await ingest.send(.get, "/v1/jobs/\(jobID)", headers: ["X-Api-Key": wrongKey]).status == 401)
                let truncated = String(decoding: notification, as: UTF8.self).replacingOccurrences(
                    of: ".", with: "", options: [], range: nil)
                #expect(try await ingest.send(.post, "/v1/apple/notifications", body: Data(truncated.utf8)).status == 400)
                await server.stop()
                #expect(try await ingest.send(.post, "/v1/apple/notifications", body: Data(notification)).status == 503)
                #expect(
                    try await ingest.send(
                        .post, "/v1/transactions", headers: user,
                        body: Data(#"{"signedTransaction":"\#(transaction)"}"#.utf8)
                    ).status == 503)
                #expect(await ingest.process.terminate(timeout: .seconds(15)))

                let log = ingest.output
                // The log was written at trace level and covers the paths above (so the checks below read something).
                #expect(log.contains("ingest ready"))
                #expect(log.contains("job enqueued"))
                #expect(log.contains("enqueue round trip failed"))
                var secrets = [
                    "Redis password": password, "client JWT secret": IngestHarness.secret,
                    "service key": IngestHarness.serviceKey, "wrong service key": wrongKey,
                    "user token": token, "forged token": forged, "receipt": String(receipt.prefix(40)),
                    "receipt tail": String(receipt.suffix(40)),
                ]
                for (name, jws) in [("transaction", transaction), ("notification", String(decoding: notification, as: UTF8.self))] {
                    for (index, segment) in jws.split(separator: ".").enumerated() {
                        let middle = segment.dropFirst(segment.count / 2).prefix(32)
                        secrets["\(name) JWS segment \(index + 1)"] = String(middle)
                    }
                }
                for (name, secret) in secrets.sorted(by: { $0.key < $1.key }) {
                    let leaked = log.contains(secret)  // not in the expectation: a failure must not print the log
                    #expect(!leaked, "the log carries the \(name)")
                }
            }
        }
    }

    /// Slow senders cannot hold connections (issue 13, item 6): a body that does not arrive within
    /// `TOLLGATE_HTTP_BODY_TIMEOUT` gets `408`, a connection that sends nothing (or headers byte by byte, slower
    /// than the idle timeout) is closed; nothing is stored.
    @Test func slowSendersAreCutOff() async throws {
        try await withRedisServer { server in
            try await IngestProcess.withIngest(
                redisURL: server.url,
                environment: [
                    "TOLLGATE_HTTP_IDLE_TIMEOUT": "2s", "TOLLGATE_HTTP_BODY_TIMEOUT": "1s",
                ]
            ) { running in
                let started = ContinuousClock.now
                let slowBody = try #require(RawConnection(port: running.port))
                slowBody.send(
                    "POST /v1/apple/notifications HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{\"sig"
                )
                let answer = await slowBody.receive(timeout: .seconds(5))
                #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer.prefix(80))")
                #expect(ContinuousClock.now - started < .seconds(4))

                let silent = try #require(RawConnection(port: running.port))
                #expect(await silent.waitForClose(timeout: .seconds(5)), "an idle connection was kept open")
                let trickle = try #require(RawConnection(port: running.port))
                trickle.send("GET /healthz HTTP/1.1\r\n")
                try await Task.sleep(for: .milliseconds(600))
                trickle.send("Host: x\r\n")
                #expect(await trickle.waitForClose(timeout: .seconds(5)), "headers trickling in kept the connection open")
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                #expect(try await redis.xlen("tg:{p0}:jobs") == 0)
            }
        }
    }

    /// With `TOLLGATE_OPS_PORT` the operators' endpoints move to their own listener, and `/readyz` answers there
    /// while every enqueue connection is held up by Redis (writes paused).
    @Test func operatorEndpointsListenApartAndReadinessDoesNotQueueBehindEnqueues() async throws {
        try await withRedisServer { server in
            let opsPort = try ChildProcess.freePort()
            try await IngestProcess.withIngest(
                redisURL: server.url,
                environment: [
                    "TOLLGATE_OPS_PORT": String(opsPort), "TOLLGATE_ENQUEUE_ROUND_TRIPS": "2",
                    "TOLLGATE_REDIS_CONNECTIONS": "2",
                ]
            ) { running in
                let ops = running.on(port: opsPort)
                #expect(try await ops.send(.get, "/metrics").status == 200)
                #expect(try await ops.send(.get, "/healthz").status == 200)
                #expect(try await running.send(.get, "/metrics").status == 404)
                #expect(try await running.send(.get, "/readyz").status == 404)

                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                _ = try await redis.send("CLIENT", "PAUSE", "20000", "WRITE")
                // Eight submissions, pipelined on the pool's two multiplexed connections: both are held in a write
                // Redis holds back, with the other submissions queued behind on them.
                var held: [Task<HTTPTransportResponse, any Error>] = []
                for index in 0..<8 {
                    let token = try await IngestHarness.token(user: "user-\(index)")
                    held.append(
                        Task {
                            try await running.send(
                                .post, "/v1/receipts", headers: ["Authorization": "Bearer \(token)"],
                                body: Data(#"{"receipt":"\#(Data("held \(index)".utf8).base64EncodedString())"}"#.utf8))
                        })
                }
                try await redis.waitForBlockedClients(2)
                let asked = ContinuousClock.now
                #expect(try await ops.send(.get, "/readyz").status == 200)
                #expect(ContinuousClock.now - asked < .seconds(5), "readiness waited behind the paused enqueues")
                _ = try await redis.send("CLIENT", "UNPAUSE")
                for request in held { _ = try? await request.value }
            }
        }
    }
}
