import AppStore
import TestSupport
import Testing

/// The structural check of an Apple JWS that ingest runs before any signature work: three non-empty base64url
/// segments and a header naming ES256 with three certificates. Every way to break the structure is refused (ingest's
/// `invalid_jws`), wherever the offending byte sits.
@Suite struct JWSStructureTests {
    @Test func theStructureIsCheckedAtEveryPosition() throws {
        let jws = try Vectors.appleReal("transaction-auto_renewable_subscription-sandbox-3.jws")
        #expect(throws: Never.self) { try JWSStructure.check(jws) }
        let bytes = Array(jws.utf8)
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        #expect(dots.count == 2)
        // A foreign byte anywhere: in the header, the payload, the signature, next to a dot, first or last. Every
        // 97th position plus both ends of each segment keeps this quick.
        var positions = Set(stride(from: 0, to: bytes.count, by: 97))
        for dot in dots { positions.formUnion([dot - 1, dot + 1]) }
        positions.formUnion([0, bytes.count - 1])
        for position in positions.sorted() where !dots.contains(position) {
            for foreign: UInt8 in [UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "="), 0x20, 0x00, 0x80, 0xFF] {
                var altered = bytes
                altered[position] = foreign
                let text = String(decoding: altered, as: UTF8.self)
                #expect(throws: JWSStructureError.self, "byte \(foreign) at \(position)") { try JWSStructure.check(text) }
            }
        }
        // Two, four or five segments; an empty one; nothing at all.
        let (header, payload, signature) = (
            String(decoding: bytes[..<dots[0]], as: UTF8.self), String(decoding: bytes[(dots[0] + 1)..<dots[1]], as: UTF8.self),
            String(decoding: bytes[(dots[1] + 1)...], as: UTF8.self)
        )
        for text in [
            "\(header).\(payload)", "\(jws).x", "\(jws)..", "\(header)..\(signature)", ".\(payload).\(signature)",
            "\(header).\(payload).", "", ".", "..",
        ] {
            #expect(throws: JWSStructureError.self, "\(text.prefix(20))…\(text.suffix(20))") { try JWSStructure.check(text) }
        }
    }
}
