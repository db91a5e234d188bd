import AppStore
import AppStoreTesting
import Core
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
                    let jobID = try #require(IngestHarness.json(response)["jobId"]?.string)
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
            var object = try #require(JSONValue.read(fixture)?.members)
            object["password"] = password.map(JSONValue.string)
            if !receipt { object["unified_receipt"] = .object(["latest_receipt_info": .array([])]) }
            return Array(JSONValue.object(object).data)
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
                let trigger = try #require(JSONValue.read(job.payload))
                #expect(trigger["notification_type"]?.string == "CANCEL")
                #expect(trigger["bid"]?.string == "com.foo.foo")
                let unified = try #require(trigger["unified_receipt"])
                #expect((unified["latest_receipt"]?.string)?.hasPrefix("MIIXDwYJ") == true)
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
                    ids.append(IngestHarness.json(response)["jobId"]?.string ?? "")
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

    /// Issue 29 item 5: one notification had 32 spellings that each made a job (16 for the unused bits of the
    /// signature's last base64url character, times ECDSA's s and n − s). Now the 30 non-canonical ones are refused
    /// and the two valid signatures are one job: deduplicated on the Apple-signed `notificationUUID`.
    @Test func oneNotificationSpelledThirtyTwoWaysIsOneJob() async throws {
        let jws = try IngestHarness.appleNotificationJWS()
        let segments = jws.split(separator: ".").map(String.init)
        let signature = try #require(Base64URL.decode(segments[2]))
        #expect(signature.count == 64)
        let mirrored = Array(signature[0..<32]) + Self.p256Negated(Array(signature[32...]))
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        var spellings: [String] = []
        for value in [signature, mirrored] {
            let canonical = Base64URL.encode(value)
            let final = try #require(canonical.last)
            let index = try #require(alphabet.firstIndex(of: final))
            for unused in 0..<16 { spellings.append(String(canonical.dropLast()) + String(alphabet[index | unused])) }
        }
        #expect(Set(spellings).count == 32)
        let bodies = spellings.map { "{\"signedPayload\":\"\(segments[0]).\(segments[1]).\($0)\"}" }
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                var jobs: Set<String> = []
                var refused = 0
                for body in bodies {
                    let response = try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(string: body))
                    if response.status == .ok {
                        jobs.insert(IngestHarness.json(response)["jobId"]?.string ?? "")
                    } else {
                        #expect(response.status == .unauthorized)
                        #expect(IngestHarness.errorCode(response) == "invalid_signature")
                        refused += 1
                    }
                }
                #expect(jobs.count == 1)
                #expect(refused == 30)
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                #expect(try await redis.xlen("tg:{p0}:jobs") == 1)
            }
        }
    }

    /// Issue 29 item 5: the door took any Apple-signed JWS as a notification (it only proved that an Apple leaf
    /// signed it). Real data Apple signed for other apps (and a test-signed REFUND of another app), or a StoreKit
    /// transaction posted as a notification, is now refused with its code and leaves nothing.
    @Test func appleSignedDataOfAnotherAppIsRefusedAtTheDoor() async throws {
        let cases: [(String, String, Int)] = [
            ("apple-real/notification-test-sandbox-2.jws", "wrong_bundle_id", 403),  // com.Abilities
            ("apple-real/notification-test-production-1.jws", "wrong_bundle_id", 403),  // com.nineton.taller, production
            ("test-signed/notification-refund-other_app-sandbox-1.jws", "wrong_bundle_id", 403),  // com.example.other
            ("apple-real/transaction-consumable-sandbox-1.jws", "not_a_notification", 400),  // a transaction, not a notification
            ("test-signed/transaction-auto_renewable_subscription-sandbox-1.jws", "not_a_notification", 400),  // this app's
        ]
        try await withRedisServer { server in
            try await IngestHarness.withApp(server) { client in
                for (file, code, status) in cases {
                    let jws = try String(contentsOf: IngestHarness.vectors.appendingPathComponent(file), encoding: .utf8)
                        .trimmingCharacters(in: .whitespacesAndNewlines)
                    let response = try await client.execute(
                        uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(string: "{\"signedPayload\":\"\(jws)\"}"))
                    #expect(Int(response.status.code) == status, "\(file)")
                    #expect(IngestHarness.errorCode(response) == code, "\(file)")
                }
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                #expect(try await IngestHarness.dbsize(redis) == 0)
            }
            // A production deployment that does not take sandbox data refuses a sandbox notification of its own app.
            try await IngestHarness.withApp(
                server,
                configure: {
                    $0.app = AppIdentity(bundleId: IngestHarness.app.bundleId, appAppleId: 1_234_567_890, environment: .production)
                }
            ) { client in
                let response = try await client.execute(
                    uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: try IngestHarness.notificationBody()))
                #expect(response.status == .forbidden)
                #expect(IngestHarness.errorCode(response) == "sandbox_not_allowed")
            }
        }
    }

    /// Issue 29 item 2: strangers sending a fresh broken chain with every request spend the door's budget for new
    /// chains, then are answered `503 chain_check_deferred` without a signature check; known chains are unaffected
    /// and nothing is stored.
    @Test func freshBrokenChainsAreDeferredOnceTheDoorBudgetIsSpent() async throws {
        let authority = try IngestHarness.testAuthority.get()
        let genuine = try IngestHarness.distinctNotificationBody("budget-genuine")
        try await withRedisServer { server in
            try await IngestHarness.withApp(
                server,
                configure: {
                    $0.doorChainCheckBurst = 3
                    $0.doorChainChecksPerSecond = 0.0001  // no refill while the test runs, however slow the machine
                }
            ) { client in
                let first = try await client.execute(uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(bytes: genuine))
                #expect(first.status == .ok)  // the test chain: two tokens
                var statuses: [Int: Int] = [:]
                for index in 0..<10 {
                    let payload = JSONValue.object([
                        "notificationType": .string("DID_RENEW"), "notificationUUID": .string("broken-\(index)"),
                        "data": .object(["bundleId": .string(IngestHarness.app.bundleId), "environment": .string("Sandbox")]),
                    ])
                    let jws = try authority.brokenLeafSigner().sign(json: payload.data)
                    let response = try await client.execute(
                        uri: "/v1/apple/notifications", method: .post, body: ByteBuffer(string: "{\"signedPayload\":\"\(jws)\"}"))
                    statuses[Int(response.status.code), default: 0] += 1
                    if response.status == .serviceUnavailable {
                        #expect(IngestHarness.errorCode(response) == "chain_check_deferred")
                        #expect(response.headers[.retryAfter] == "1")
                    }
                }
                #expect(statuses[401, default: 0] <= 2, "\(statuses)")
                #expect(statuses[503, default: 0] >= 8, "\(statuses)")
                let again = try await client.execute(
                    uri: "/v1/apple/notifications", method: .post,
                    body: ByteBuffer(bytes: try IngestHarness.distinctNotificationBody("budget-2")))
                #expect(again.status == .ok, "a known chain needs no budget")
                let redis = try await IngestHarness.redis(server)
                defer { redis.close() }
                #expect(try await redis.xlen("tg:{p0}:jobs") == 2)
            }
        }
    }

    /// `s` ↦ `n − s` modulo P-256's group order: the other valid ECDSA signature for the same `r`.
    static func p256Negated(_ s: [UInt8]) -> [UInt8] {
        let order: [UInt8] = [
            0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
            0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
        ]
        var result = [UInt8](repeating: 0, count: 32)
        var borrow = 0
        for index in stride(from: 31, through: 0, by: -1) {
            var digit = Int(order[index]) - Int(s[index]) - borrow
            borrow = digit < 0 ? 1 : 0
            if digit < 0 { digit += 256 }
            result[index] = UInt8(digit)
        }
        return result
    }
}
