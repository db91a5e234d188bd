import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Pipeline
import TestSupport
import Testing

@testable import ingest

/// Issue 42, item 12: refused keys and tokens leave a log line, at most one per interval with the count of those left
/// out, never the key or the token.
@Suite struct RefusalLogTests {
    static let secret = "test-client-secret-0123456789abcdefghij"
    static let readKey = "test-read-key-0123456789abcdefghijklmnop"

    static func request(_ fields: HTTPFields) -> Request {
        Request(
            head: HTTPRequest(method: .get, scheme: "http", authority: "localhost", path: "/", headerFields: fields),
            body: RequestBody(buffer: ByteBuffer()))
    }

    static func apiKey(_ key: String) throws -> HTTPFields {
        var fields = HTTPFields()
        fields[try #require(HTTPField.Name("X-Api-Key"))] = key
        return fields
    }

    @Test func refusalsAreLoggedRateLimitedWithoutTheSecret() async throws {
        let lines = RecordedLines()
        let time = ManualTime(1_767_225_600_000)
        let refusals = RefusalLog(logger: Logger(label: "test") { _ in RecordingLogHandler(sink: lines) }, clock: time.clock)
        let authenticator = await Authenticator(
            clientJWTSecret: Self.secret, serviceKeys: [try ServiceKey(entry: "reader:read:\(Self.readKey)")], refusals: refusals)
        let unknown = "not-a-key-but-a-guess-0123456789abcdefgh"
        let token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlLW5vdC12YWxpZA"
        // An accepted key logs nothing.
        _ = try await authenticator.service(Self.request(try Self.apiKey(Self.readKey)), scope: .read)
        #expect(lines.all.isEmpty)
        // Five unknown keys at once: one line, with the key's hint, the others counted.
        for _ in 0..<5 {
            await #expect(throws: IngestError.self) { try await authenticator.authenticate(Self.request(try Self.apiKey(unknown))) }
        }
        #expect(lines.all.count == 1)
        let first = try #require(lines.all.first)
        #expect(first.message == "credentials refused")
        #expect(first.metadata["reason"]?.description == "unknown API key")
        #expect(first.metadata["key"]?.description == RefusalLog.hint(unknownKey: unknown))
        #expect(first.metadata["suppressed"]?.description == "0")
        // A refused token and a key without the scope within the interval: counted, not logged.
        await #expect(throws: IngestError.self) { try await authenticator.authenticate(Self.request([.authorization: "Bearer \(token)"])) }
        await #expect(throws: IngestError.self) {
            try await authenticator.service(Self.request(try Self.apiKey(Self.readKey)), scope: .spend)
        }
        #expect(lines.all.count == 1)
        time.advance(milliseconds: 10_000)
        await #expect(throws: IngestError.self) {
            try await authenticator.service(Self.request(try Self.apiKey(Self.readKey)), scope: .grant)
        }
        #expect(lines.all.count == 2)
        let second = try #require(lines.all.last)
        #expect(second.metadata["key"]?.description == "reader" && second.metadata["suppressed"]?.description == "6")
        #expect(second.metadata["reason"]?.description.contains("lacks the scope grant") == true)
        time.advance(milliseconds: 10_000)
        await #expect(throws: IngestError.self) { try await authenticator.authenticate(Self.request([.authorization: "Bearer \(token)"])) }
        #expect(lines.all.count == 3)
        #expect(lines.all.last?.metadata["key"] == nil)
        // No line holds a key or the token, nor a part of one.
        for line in lines.all {
            for secret in [unknown, token, Self.readKey] {
                #expect(!line.description.contains(secret.prefix(16)), "\(line)")
            }
        }
    }
}
