import Core
import Foundation
import Hummingbird
import Pipeline
import TestSupport
import Testing

@testable import ingest

/// The notification path's hand-written pieces: job ids and the `{"jobId"}` answer.
@Suite struct JobIDResponseTests {
    @Test func newJobIDsAre32LowercaseHexDigitsAndDistinct() {
        let keys = Keys()
        let ids = (0..<1000).map { _ in keys.newJobID(partition: 0) }
        #expect(Set(ids).count == ids.count)
        for id in ids {
            #expect(id.utf8.count == 32)
            #expect(id.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }, "\(id)")
        }
        // Version 4 UUID: the 13th hex digit is 4, as in Job.newID().
        #expect(ids.allSatisfy { Array($0.utf8)[12] == UInt8(ascii: "4") })
        // The RFC's variant: the 17th hex digit is 8, 9, a or b; and each id reads back as a UUID.
        #expect(ids.allSatisfy { "89ab".utf8.contains(Array($0.utf8)[16]) })
        for id in ids.prefix(20) {
            let text = Array(id)
            let dashed = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(text[$0]) }.joined(separator: "-")
            #expect(UUID(uuidString: dashed)?.uuidString.lowercased() == dashed)
        }
    }

    @Test(arguments: ["0123456789abcdef0123456789abcdef", "weird\"id\\with\u{1}controls"])
    func theAnswerIsJSONWithTheJobID(id: String) async throws {
        let response = jobIDResponse(.ok, id)
        #expect(response.status == .ok)
        #expect(response.headers[.contentType] == "application/json")
        var collected = ByteBuffer()
        let body = response.body
        let writer = CollectingWriter { collected.writeImmutableBuffer($0) }
        try await body.write(writer)
        #expect(JSONValue.read(collected.readableBytesView) == .object(["jobId": .string(id)]))
    }
}

/// A response body writer that hands every buffer to a closure.
private struct CollectingWriter: ResponseBodyWriter {
    let onWrite: (ByteBuffer) -> Void
    mutating func write(_ buffer: ByteBuffer) async throws { onWrite(buffer) }
    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
