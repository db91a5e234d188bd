import Core
import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@testable import ingest

@Suite struct ConsentEndpointTests {
    @Test func onlyAServiceRecordsAUsersConsentUnderTheUsersKeys() async throws {
        try await withRedisServer { server in
            let redis = try await IngestHarness.redis(server)
            defer { redis.close() }
            let key = Keys(prefix: "tg").consent(user: "alice")
            #expect(key == "tg:{u:alice}:consent")
            try await IngestHarness.withApp(server) { client in
                // The user cannot vouch for their own consent, nobody anonymous can.
                let own = try await client.execute(
                    uri: "/v1/users/alice/consent", method: .put, headers: try await IngestHarness.userHeaders("alice"),
                    body: ByteBuffer(string: #"{"consented":true}"#))
                #expect(own.status == .forbidden)
                let anonymous = try await client.execute(
                    uri: "/v1/users/alice/consent", method: .put, body: ByteBuffer(string: #"{"consented":true}"#))
                #expect(anonymous.status == .unauthorized)
                #expect(try await redis.send("EXISTS", key).int == 0)

                // Not a Boolean: refused, nothing stored.
                for body in [#"{"consented":1}"#, #"{"consented":"yes"}"#, "{}", "[]"] {
                    let bad = try await client.execute(
                        uri: "/v1/users/alice/consent", method: .put, headers: try IngestHarness.apiKeyHeaders(),
                        body: ByteBuffer(string: body))
                    #expect(bad.status == .badRequest, "\(body)")
                    #expect(IngestHarness.errorCode(bad) == "invalid_request", "\(body)")
                }
                #expect(try await redis.send("EXISTS", key).int == 0)

                let granted = try await client.execute(
                    uri: "/v1/users/alice/consent", method: .put, headers: try IngestHarness.apiKeyHeaders(),
                    body: ByteBuffer(string: #"{"consented":true}"#))
                #expect(granted.status == .ok)
                #expect(IngestHarness.json(granted)["consented"]?.bool == true)
                #expect(try await redis.send("HGET", key, "consented").string == "1")
                #expect(try await redis.send("HGET", key, "at").string != nil)

                let withdrawn = try await client.execute(
                    uri: "/v1/users/alice/consent", method: .put, headers: try IngestHarness.apiKeyHeaders(),
                    body: ByteBuffer(string: #"{"consented":false}"#))
                #expect(withdrawn.status == .ok)
                #expect(try await redis.send("HGET", key, "consented").string == "0")

                let invalidUser = try await client.execute(
                    uri: "/v1/users/a%7Db/consent", method: .put, headers: try IngestHarness.apiKeyHeaders(),
                    body: ByteBuffer(string: #"{"consented":true}"#))
                #expect(invalidUser.status == .badRequest)
            }
        }
    }
}
