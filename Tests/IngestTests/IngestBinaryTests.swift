import AppStore
import Foundation
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
    /// A running `ingest` process, its base URL and its log file.
    private struct Running {
        let process: ChildProcess
        let base: String
        let port: Int
        let log: URL
        let http = URLSessionTransport()

        func send(_ method: HTTPTransportRequest.Method, _ path: String, headers: [String: String] = [:],
                  body: Data? = nil) async throws -> HTTPTransportResponse {
            try await http.send(HTTPTransportRequest(
                method: method, url: try #require(URL(string: base + path)),
                headers: body == nil ? headers : headers.merging(["Content-Type": "application/json"]) { old, _ in old },
                body: body, timeout: .seconds(40)))
        }

        var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }
    }

    private func withIngest(redisURL: String, environment: [String: String] = [:], _ body: (Running) async throws -> Void) async throws {
        let port = try ChildProcess.freePort()
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("tollgate-ingest-\(UUID().uuidString).log")
        defer { try? FileManager.default.removeItem(at: log) }
        let process = try ChildProcess.start("ingest", environment: [
            "TOLLGATE_REDIS_URL": redisURL, "TOLLGATE_HTTP_HOST": "127.0.0.1", "TOLLGATE_HTTP_PORT": String(port),
            "TOLLGATE_CLIENT_JWT_SECRET": IngestHarness.secret, "TOLLGATE_SERVICE_KEYS": IngestHarness.serviceKey,
            "TOLLGATE_REDIS_COMMAND_TIMEOUT_MS": "10000",
            "TOLLGATE_ROOT_CERTS": try Self.rootsFile().path,
        ].merging(environment) { _, new in new }, log: log)
        defer { if process.process.isRunning { process.kill() } }
        let running = Running(process: process, base: "http://127.0.0.1:\(port)", port: port, log: log)
        try await waitUntilReady(running, readiness: environment["TOLLGATE_OPS_PORT"].map { "http://127.0.0.1:\($0)" } ?? running.base)
        try await body(running)
    }

    @Test func sigtermFinishesAcceptedRequestsThenExits() async throws {
        try await withRedisServer { server in
            try await withIngest(redisURL: server.url) { running in
                let ingest = running.process
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }

                // 1. A client submission waiting for its result (the test plays the fulfiller below).
                let token = try await IngestHarness.token(user: "alice")
                let waiting = Task {
                    try await running.send(.post, "/v1/receipts?wait=25", headers: ["Authorization": "Bearer \(token)"],
                                           body: Data(#"{"receipt":"AAAA"}"#.utf8))
                }
                let submitted = try await firstJobID(redis)

                // 2. An Apple notification whose enqueue Redis holds up (writes paused for 4 s): in flight once
                //    Redis counts a blocked client.
                _ = try await redis.send("CLIENT", "PAUSE", "4000", "WRITE")
                let notification = Task {
                    try await running.send(.post, "/v1/apple/notifications", body: Data(try IngestHarness.notificationBody()))
                }
                try await waitForBlockedClient(redis)
                #expect(try await redis.xlen("tg:{p0}:jobs") == 1, "the paused enqueue must not have landed yet")

                // 3. SIGTERM: the listener closes while both requests are still open.
                ingest.process.send(SIGTERM)
                #expect(await refusesConnections(port: running.port, within: .seconds(10)), "ingest kept accepting after SIGTERM")
                #expect(ingest.process.isRunning, "ingest exited with requests in flight")

                // The paused enqueue completes once Redis takes writes again: 200, and the job is in the stream.
                let notified = try await notification.value
                #expect(notified.status == 200)
                let notifiedJob = try #require((try JSONSerialization.jsonObject(with: notified.body) as? [String: Any])?["jobId"] as? String)
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
                let json = try JSONSerialization.jsonObject(with: answered.body) as? [String: Any]
                #expect(json?["jobId"] as? String == submitted)
                #expect(json?["status"] as? String == "fulfilled")

                // Then it exits, successfully.
                #expect(await ingest.process.waitForExit(timeout: .seconds(15)), "ingest did not exit after finishing its requests")
                #expect(ingest.process.terminationStatus == 0)
                #expect(!ingest.process.terminatedBySignal)
            }
        }
    }

    @Test func logsNeverCarrySecretsTokensReceiptsOrJWS() async throws {
        try await withRedisServer { server in
            let admin = try await IngestHarness.redis(server)
            defer { admin.close() }
            let password = "redis-password-\(UUID().uuidString)"
            _ = try await admin.send("CONFIG", "SET", "requirepass", password)  // this connection stays authenticated
            try await withIngest(redisURL: "redis://:\(password)@127.0.0.1:\(server.port)",
                                 environment: ["LOG_LEVEL": "trace"]) { ingest in
                let token = try await IngestHarness.token(user: "alice")
                let forged = try await IngestHarness.token(user: "alice", secret: "another-secret-0123456789abcdefghijkl")
                let wrongKey = "wrong-service-key-\(UUID().uuidString)"
                let receipt = Data((0..<900).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }).base64EncodedString()
                let transaction = try IngestHarness.transactionJWS()
                let notification = try IngestHarness.notificationBody()
                let user = ["Authorization": "Bearer \(token)"]

                // Accepted work, refused credentials, malformed bodies, then a dead Redis.
                #expect(try await ingest.send(.post, "/v1/receipts", headers: user, body: Data(#"{"receipt":"\#(receipt)"}"#.utf8)).status == 202)
                let accepted = try await ingest.send(.post, "/v1/transactions", headers: user,
                                                    body: Data(#"{"signedTransaction":"\#(transaction)"}"#.utf8))
                #expect(accepted.status == 202)
                let jobID = try #require((try JSONSerialization.jsonObject(with: accepted.body) as? [String: Any])?["jobId"] as? String)
                #expect(try await ingest.send(.post, "/v1/apple/notifications", body: Data(notification)).status == 200)
                #expect(try await ingest.send(.post, "/v1/receipts", headers: ["Authorization": "Bearer \(forged)"],
                                              body: Data(#"{"receipt":"\#(receipt)"}"#.utf8)).status == 401)
                #expect(try await ingest.send(.post, "/v1/receipts", headers: ["Authorization": "Bearer \(token)x"],
                                              body: Data(#"{"receipt":"\#(receipt)"}"#.utf8)).status == 401)
                #expect(try await ingest.send(.get, "/v1/jobs/\(jobID)", headers: ["X-Api-Key": IngestHarness.serviceKey]).status == 200)
                #expect(try await ingest.send(.get, "/v1/jobs/\(jobID)", headers: ["X-Api-Key": wrongKey]).status == 401)
                let truncated = String(decoding: notification, as: UTF8.self).replacingOccurrences(of: ".", with: "", options: [], range: nil)
                #expect(try await ingest.send(.post, "/v1/apple/notifications", body: Data(truncated.utf8)).status == 400)
                await server.stop()
                #expect(try await ingest.send(.post, "/v1/apple/notifications", body: Data(notification)).status == 503)
                #expect(try await ingest.send(.post, "/v1/transactions", headers: user,
                                              body: Data(#"{"signedTransaction":"\#(transaction)"}"#.utf8)).status == 503)
                #expect(await ingest.process.terminate(timeout: .seconds(15)))

                let log = ingest.output
                // The log was written at trace level and covers the paths above (so the checks below read something).
                #expect(log.contains("ingest ready"))
                #expect(log.contains("job enqueued"))
                #expect(log.contains("enqueue round trip failed"))
                var secrets = ["Redis password": password, "client JWT secret": IngestHarness.secret,
                               "service key": IngestHarness.serviceKey, "wrong service key": wrongKey,
                               "user token": token, "forged token": forged, "receipt": String(receipt.prefix(40)),
                               "receipt tail": String(receipt.suffix(40))]
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

    private func waitUntilReady(_ running: Running, readiness base: String) async throws {
        for _ in 0..<300 {
            if let response = try? await running.http.send(HTTPTransportRequest(
                method: .get, url: try #require(URL(string: base + "/readyz")), timeout: .seconds(2))),
               response.status == 200 {
                return
            }
            guard running.process.process.isRunning else { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("ingest did not become ready: \(running.output.suffix(2000))")
        throw ChildProcess.Failure(description: "ingest not ready")
    }

    /// Slow senders cannot hold connections (issue 13, item 6): a body that does not arrive within
    /// `TOLLGATE_HTTP_BODY_TIMEOUT` gets `408`, a connection that sends nothing (or headers byte by byte, slower
    /// than the idle timeout) is closed; nothing is stored.
    @Test func slowSendersAreCutOff() async throws {
        try await withRedisServer { server in
            try await withIngest(redisURL: server.url, environment: [
                "TOLLGATE_HTTP_IDLE_TIMEOUT": "2s", "TOLLGATE_HTTP_BODY_TIMEOUT": "1s",
            ]) { running in
                let started = ContinuousClock.now
                let slowBody = try #require(RawConnection(port: running.port))
                slowBody.send("POST /v1/apple/notifications HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n{\"sig")
                let answer = slowBody.receive(timeout: .seconds(5))
                #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer.prefix(80))")
                #expect(ContinuousClock.now - started < .seconds(4))

                let silent = try #require(RawConnection(port: running.port))
                #expect(silent.waitForClose(timeout: .seconds(5)), "an idle connection was kept open")
                let trickle = try #require(RawConnection(port: running.port))
                trickle.send("GET /healthz HTTP/1.1\r\n")
                try await Task.sleep(for: .milliseconds(600))
                trickle.send("Host: x\r\n")
                #expect(trickle.waitForClose(timeout: .seconds(5)), "headers trickling in kept the connection open")
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
            try await withIngest(redisURL: server.url, environment: [
                "TOLLGATE_OPS_PORT": String(opsPort), "TOLLGATE_ENQUEUE_ROUND_TRIPS": "2",
            ]) { running in
                let ops = Running(process: running.process, base: "http://127.0.0.1:\(opsPort)", port: opsPort, log: running.log)
                #expect(try await ops.send(.get, "/metrics").status == 200)
                #expect(try await ops.send(.get, "/healthz").status == 200)
                #expect(try await running.send(.get, "/metrics").status == 404)
                #expect(try await running.send(.get, "/readyz").status == 404)

                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                _ = try await redis.send("CLIENT", "PAUSE", "3000", "WRITE")
                // Eight submissions: each holds a pooled connection in a write Redis holds back (the pool has 2 + 4).
                var held: [Task<HTTPTransportResponse, any Error>] = []
                for index in 0..<8 {
                    let token = try await IngestHarness.token(user: "user-\(index)")
                    held.append(Task {
                        try await running.send(.post, "/v1/receipts", headers: ["Authorization": "Bearer \(token)"],
                                               body: Data(#"{"receipt":"\#(Data("held \(index)".utf8).base64EncodedString())"}"#.utf8))
                    })
                }
                try await waitForBlockedClient(redis, count: 6)
                let asked = ContinuousClock.now
                #expect(try await ops.send(.get, "/readyz").status == 200)
                #expect(ContinuousClock.now - asked < .seconds(1), "readiness waited behind the paused enqueues")
                for request in held { _ = try? await request.value }
            }
        }
    }

    /// Returns once Redis holds `count` clients' commands back (`INFO clients`: `blocked_clients`).
    private func waitForBlockedClient(_ redis: RedisConnection, count wanted: Int = 1) async throws {
        for _ in 0..<300 {
            let info = try await redis.send("INFO", "clients").string ?? ""
            let blocked = info.split(whereSeparator: \.isNewline).first { $0.hasPrefix("blocked_clients:") }
            if let blocked, let count = Int(blocked.dropFirst("blocked_clients:".count)), count >= wanted { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw ChildProcess.Failure(description: "the notification's enqueue never reached Redis")
    }

    /// The id of the first job in the stream, once there is one.
    private func firstJobID(_ redis: RedisConnection) async throws -> String {
        for _ in 0..<500 {
            if let id = try await redis.xrange("tg:{p0}:jobs").first?.string(Job.Field.id) { return id }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ChildProcess.Failure(description: "the submission never reached the jobs stream")
    }

    /// True once a new TCP connection to `port` is refused (checked with a plain `connect`, so that no
    /// client library reuses a kept-alive connection).
    private func refusesConnections(port: Int, within timeout: Duration) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if !Self.connects(port: port) { return true }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    private static func connects(port: Int) -> Bool {
        RawConnection(port: port) != nil
    }

    /// A PEM file of Apple's root and the test CA's (for ``IngestHarness/distinctNotificationBody(_:)``).
    private static func rootsFile() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tollgate-ingest-roots-\(getpid()).pem")
        if FileManager.default.fileExists(atPath: url.path) { return url }
        let pem = [AppleRootCertificates.appleRootCAG3, try IngestHarness.testAuthority.get().rootDER].map { der in
            "-----BEGIN CERTIFICATE-----\n" + der.base64EncodedString(options: .lineLength64Characters) + "\n-----END CERTIFICATE-----\n"
        }.joined()
        try Data(pem.utf8).write(to: url)
        return url
    }
}

/// A plain TCP connection for speaking HTTP by hand (slow senders).
private final class RawConnection {
    let descriptor: Int32

    init?(port: Int) {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(descriptor)
            return nil
        }
    }

    deinit { close(descriptor) }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// What arrives before the peer closes or `timeout` passes.
    func receive(timeout: Duration) -> String {
        var received: [UInt8] = []
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[0..<count]
            if String(decoding: received, as: UTF8.self).contains("\r\n\r\n") { break }
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// True once the peer closes the connection within `timeout`.
    func waitForClose(timeout: Duration) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            if recv(descriptor, &buffer, buffer.count, 0) <= 0 { return true }
        }
        return false
    }
}
