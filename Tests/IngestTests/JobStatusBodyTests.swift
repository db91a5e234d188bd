import Foundation
import Hummingbird
import Pipeline
import Testing

@testable import ingest

/// The job status answer, written by hand (``JobStatusBody``, ``JSONObjectWriter``, ``JSONSyntax``): it must be
/// the JSON the documented shape promises for every status, whatever its strings hold.
@Suite struct JobStatusBodyTests {
    private func object(_ status: JobStatus) throws -> [String: Any] {
        let buffer = JobStatusBody.render(status)
        let parsed = try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))
        return try #require(parsed as? [String: Any])
    }

    @Test func aFulfilledStatusEmbedsTheResultAsJSON() throws {
        let status = JobStatus(
            jobID: "0123456789abcdef0123456789abcdef", state: .fulfilled, updatedAtMilliseconds: 1,
            resultJSON: #"{"coins":100,"balance":250,"items":[{"product":"com.example.coins100"}],"x":null}"#)
        let json = try object(status)
        #expect(json["jobId"] as? String == status.jobID)
        #expect(json["status"] as? String == "fulfilled")
        let result = try #require(json["result"] as? [String: Any])
        #expect(result["coins"] as? Int == 100)
        #expect(result["balance"] as? Int == 250)
        #expect((result["items"] as? [[String: String]])?.first?["product"] == "com.example.coins100")
        #expect(Set(json.keys) == ["jobId", "status", "result"])
    }

    @Test func aRetryingStatusCarriesEveryField() throws {
        let status = JobStatus(
            jobID: "j", state: .retrying, reason: "apple_unavailable", message: "verifyReceipt answered 503",
            attempt: 3, nextAttemptAtMilliseconds: 1_700_000_000_123, updatedAtMilliseconds: 1)
        let json = try object(status)
        #expect(json["status"] as? String == "retrying")
        #expect(json["reason"] as? String == "apple_unavailable")
        #expect(json["message"] as? String == "verifyReceipt answered 503")
        #expect(json["attempt"] as? Int == 3)
        #expect(json["nextAttemptAt"] as? String == "2023-11-14T22:13:20.123Z")
    }

    @Test(arguments: [
        "quote\" backslash\\ slash/ newline\n tab\t nul\u{0} bell\u{7} unit\u{1f}", "ünïcødé ✓ 𝄞", "",
    ])
    func stringsWithAnyCharactersRoundTrip(text: String) throws {
        let status = JobStatus(jobID: text, state: .rejected, reason: text, message: text, updatedAtMilliseconds: 1)
        let json = try object(status)
        #expect(json["jobId"] as? String == text)
        #expect(json["reason"] as? String == text)
        #expect(json["message"] as? String == text)
    }

    @Test(arguments: [
        "{", "{\"a\":}", "[1,]", "{\"a\":1}x", "tru", "01", "1.", "-", "\"unterminated", "{\"a\" 1}", "\"bad \\q\"",
        "\"ctrl \u{1}\"", "{\"a\":1,}", "", "   ", "\"\\u12g4\"", String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
    ])
    func aResultThatIsNotJSONIsEmbeddedAsAString(stored: String) throws {
        #expect(!JSONSyntax.isValid(stored.utf8))
        let status = JobStatus(jobID: "j", state: .fulfilled, updatedAtMilliseconds: 1, resultJSON: stored)
        #expect(try object(status)["result"] as? String == stored)
    }

    @Test(arguments: [
        "{}", "[]", " {\"a\" : [1, -2.5e+3, 0, true, false, null, \"s\\\"\\u00e9\"]} ", "0", "-0.0E-1", "\"x\"", "null",
        String(repeating: "[", count: 60) + String(repeating: "]", count: 60),
    ])
    func validJSONIsRecognised(text: String) throws {
        #expect(JSONSyntax.isValid(text.utf8))
        // The reference parser agrees.
        #expect((try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])) != nil)
    }

    @Test func aMissingStatusIsQueued() throws {
        let buffer = JobStatusBody.renderQueued(jobID: "abc\"")
        let json = try JSONSerialization.jsonObject(with: Data(buffer.readableBytesView)) as? [String: String]
        #expect(json == ["jobId": "abc\"", "status": "queued"])
    }
}
