import Core
import Testing

@testable import ingest

/// A submitted receipt is checked at the door by the rule the verifier applies before calling Apple
/// (``Core/StandardBase64``), after spaces turn back into `+` and line breaks and tabs go.
@Suite struct ReceiptNormalizationTests {
    @Test func receiptsAreStandardBase64AfterNormalizing() throws {
        let accepted: [(String, String)] = [
            ("AAAA", "AAAA"), ("AA==", "AA=="), ("AAA=", "AAA="), ("ab+/", "ab+/"), ("a b/", "a+b/"),
            ("AA\nAA\r\n\tAA==", "AAAAAA=="), (" AAA", "+AAA"),
        ]
        for (raw, normalized) in accepted {
            #expect(try Submission.normalizedReceipt(raw, maxBytes: 64) == Array(normalized.utf8), "\(raw.debugDescription)")
        }
        let refused = [
            "AAA", "AAAAA", "A===", "AA=A", "=AAA", "AA-_", "AA.A", "\n\t\r", "AAA\u{0}", "AAÉA", "AAAA====",
        ]
        for raw in refused {
            #expect(throws: IngestError.self, "\(raw.debugDescription)") { try Submission.normalizedReceipt(raw, maxBytes: 64) }
        }
        // The length bound applies to the normalized receipt: 64 bytes pass, 68 do not.
        #expect(throws: Never.self) { try Submission.normalizedReceipt(String(repeating: "AAAA", count: 16), maxBytes: 64) }
        #expect(throws: IngestError.self) { try Submission.normalizedReceipt(String(repeating: "AAAA", count: 17), maxBytes: 64) }
    }
}
