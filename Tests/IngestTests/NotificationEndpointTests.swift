import Foundation
import Hummingbird
import HummingbirdTesting
import Pipeline
import Redis
import TestSupport
import Testing

@testable import ingest

@Suite struct NotificationEndpointTests {
    @Test func v2NotificationIsInTheJobsStreamByteForByte() async throws {
        try await withRedisServer { server in
            let body = try IngestHarness.notificationBody()
            try await IngestHarness.withApp(server) { client in
                try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: body)) { response in
                    #expect(response.status == .ok)
                    let jobID = try #require(IngestHarness.json(response)["jobId"] as? String)
                    let redis = try await IngestHarness.redis(server)
                    defer { redis.close() }
                    let entries = try await redis.xrange("tg:{p0}:jobs")
                    #expect(entries.count == 1)
                    let job = try Job(entry: try #require(entries.first))
                    #expect(job.payload == body)
                    #expect(job.id == jobID)
                    #expect(job.kind == .notificationV2)
                    #expect(job.source == .apple)
                    let status = try await redis.send("HGET", "tg:{p0}:job:\(jobID)", "state")
                    #expect(status.string == "queued")
                    let ttl = try await redis.send("TTL", "tg:{p0}:job:\(jobID)").int ?? -1
                    #expect(ttl > 0)
                }
            }
        }
    }

    /// V1 is off unless configured; on, a body without the shared secret is refused with nothing stored, and an
    /// accepted one is stored without its password and without its own transaction fields (issue 13, hole 2).
    @Test func v1NotificationsAreTriggersWithoutTheirPassword() async throws {
        let fixture = try Data(contentsOf: IngestHarness.vectors.appendingPathComponent("legacy/server-notification-v1-cancel.json"))
        func body(password: String?, receipt: Bool = true) throws -> [UInt8] {
            var object = try JSONSerialization.jsonObject(with: fixture) as? [String: Any] ?? [:]
            object["password"] = password
            if !receipt { object["unified_receipt"] = ["latest_receipt_info": []] }
            return Array(try JSONSerialization.data(withJSONObject: object))
        }
        let right = try body(password: "foo")
        let wrongs = try [nil, "", "fo", "foo ", "FOO", "foo\u{0}"].map { try body(password: $0) }
        let withoutReceipt = try body(password: "foo", receipt: false)
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                let off = try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: right))
                #expect(off.status == .forbidden)
                #expect(IngestHarness.errorCode(off) == "v1_notifications_disabled")
            }
            try await IngestHarness.withApp(server, configure: { $0.v1SharedSecret = "foo" }) { client in
                for (index, wrong) in wrongs.enumerated() {
                    let response = try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: wrong))
                    #expect(response.status == .unauthorized, "case \(index)")
                    #expect(IngestHarness.errorCode(response) == "shared_secret_mismatch")
                }
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                #expect(try await IngestHarness.dbsize(redis) == 0)

                let accepted = try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: right))
                #expect(accepted.status == .ok)
                let job = try Job(entry: try #require(try await redis.xrange("tg:{p0}:jobs").first))
                #expect(job.kind == .notificationV1)
                let stored = String(decoding: job.payload, as: UTF8.self)
                #expect(!stored.contains("password") && !stored.contains("\"foo\""), "\(stored.prefix(200))")
                #expect(!stored.contains("latest_receipt_info") && !stored.contains("transaction_id"), "\(stored.prefix(200))")
                let trigger = try #require(try JSONSerialization.jsonObject(with: Data(job.payload)) as? [String: Any])
                #expect(trigger["notification_type"] as? String == "CANCEL")
                #expect(trigger["bid"] as? String == "com.foo.foo")
                let unified = try #require(trigger["unified_receipt"] as? [String: Any])
                #expect((unified["latest_receipt"] as? String)?.hasPrefix("MIIXDwYJ") == true)
                // Nothing else of the body was kept anywhere in Redis.
                let everything = try await redis.send("KEYS", "*").array?.compactMap(\.string) ?? []
                for key in everything where key.hasPrefix("tg:{p0}:job:") {
                    let hash = try await redis.hgetall(key)
                    #expect(!hash.values.contains { $0.contains("foo") && $0.contains("password") })
                }

                let noReceipt = try await client.execute(
                    uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: withoutReceipt))
                #expect(noReceipt.status == .badRequest)
                #expect(IngestHarness.errorCode(noReceipt) == "invalid_receipt")
                #expect(try await redis.xlen("tg:{p0}:jobs") == 1)
            }
        }
    }

    @Test func appleRetriesOfTheSameBodyGiveOneJob() async throws {
        try await withRedisServer { server in
            let body = try IngestHarness.notificationBody()
            try await IngestHarness.withApp(server) { client in
                var ids: [String] = []
                for _ in 0..<3 {
                    let response = try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: body))
                    #expect(response.status == .ok)
                    ids.append(IngestHarness.json(response)["jobId"] as? String ?? "")
                }
                #expect(Set(ids).count == 1)
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                #expect(try await redis.xlen("tg:{p0}:jobs") == 1)
            }
        }
    }

    /// Every request that can never be valid gets its documented 4xx code and writes nothing to Redis.
    @Test func invalidNotificationsAreRefusedAndLeaveNothing() async throws {
        let jws = try String(decoding: IngestHarness.notificationBody(), as: UTF8.self)
        let segments = try #require(jws.split(separator: "\"").dropFirst(3).first).split(separator: ".")
        let hs256Header = IngestHarness.base64URL(#"{"alg":"HS256","x5c":["a","b","c"]}"#)
        let shortChain = IngestHarness.base64URL(#"{"alg":"ES256","x5c":["a"]}"#)
        var cases: [(String, [UInt8], String, Int)] = [
            ("oversized", Array("{\"signedPayload\":\"\(String(repeating: "a", count: 70_000))\"}".utf8), "payload_too_large", 413),
            ("not json", Array("signedPayload=abc".utf8), "invalid_json", 400),
            ("empty", [], "invalid_json", 400),
            ("truncated jws", Array("{\"signedPayload\":\"\(segments[0]).\(segments[1])\"}".utf8), "invalid_jws", 400),
            ("bad base64url", Array("{\"signedPayload\":\"\(segments[0]).a+b.c\"}".utf8), "invalid_jws", 400),
            ("wrong alg", Array("{\"signedPayload\":\"\(hs256Header).\(segments[1]).\(segments[2])\"}".utf8), "unsupported_algorithm", 400),
            ("short chain", Array("{\"signedPayload\":\"\(shortChain).\(segments[1]).\(segments[2])\"}".utf8), "invalid_jws", 400),
        ]
        // Headers that can never be Apple's: each refused as `invalid_jws` before any signature work.
        for header in [
            #"{"x5c":["a","b","c"]}"#, #"{"alg":256,"x5c":["a","b","c"]}"#, #"{"alg":"ES256","x5c":"abc"}"#,
            #"{"alg":"ES256","x5c":["a","","c"]}"#, #"{"alg":"ES256","x5c":["a","b",3]}"#, #"["ES256"]"#, "not json",
            #"{"alg":"HS256","alg":"ES256","x5c":["a","b","c"]}"#,
        ] {
            let forged = "\(IngestHarness.base64URL(header)).\(segments[1]).\(segments[2])"
            cases.append(("header \(header)", Array("{\"signedPayload\":\"\(forged)\"}".utf8), "invalid_jws", 400))
        }
        cases += [
            ("neither v1 nor v2", Array(#"{"hello":"world"}"#.utf8), "unknown_notification", 400),
            (
                "signedPayload twice",
                Array("{\"signedPayload\":\"\(segments.joined(separator: "."))\",\"signedPayload\":\"a.b.c\"}".utf8),
                "invalid_json", 400
            ),
            ("signedPayload not a string", Array(#"{"signedPayload":7}"#.utf8), "invalid_jws", 400),
        ]
        let refused = cases
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                for (name, body, code, status) in refused {
                    let response = try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: body))
                    #expect(Int(response.status.code) == status, "\(name)")
                    #expect(IngestHarness.errorCode(response) == code, "\(name)")
                }
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                #expect(try await redis.xlen("tg:{p0}:jobs") == 0)
                #expect(try await IngestHarness.dbsize(redis) == 0)
            }
        }
    }
}
