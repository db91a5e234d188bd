import Core
import Hummingbird
import Pipeline
import Testing

@testable import ingest

/// The job status answer (``JobStatusBody``, written with Core's `JSONWriter`): it must be the JSON the documented
/// shape promises for every status, whatever its strings hold, with a stored result embedded as it is.
@Suite struct JobStatusBodyTests {
    private func object(_ status: JobStatus) throws -> JSONFields {
        try JSONFields(JSONReader.parse(Array(JobStatusBody.render(status).readableBytesView)))
    }

    @Test func aFulfilledStatusEmbedsTheResultAsJSON() throws {
        let status = JobStatus(
            jobID: "0123456789abcdef0123456789abcdef", state: .fulfilled, updatedAtMilliseconds: 1,
            resultJSON: #"{"coins":100,"balance":250,"items":[{"product":"com.example.coins100"}],"x":null}"#)
        let json = try object(status)
        #expect(try json.string("jobId") == status.jobID)
        #expect(try json.string("status") == "fulfilled")
        let result = try #require(try json.optionalObject("result"))
        #expect(try result.int("coins") == 100)
        #expect(try result.int("balance") == 250)
        let products = try result.array("items") { (item, path) throws(JSONError) in
            try JSONFields(item, path: path).string("product")
        }
        #expect(products == ["com.example.coins100"])
        #expect(Set(json.members.keys) == ["jobId", "status", "result"])
    }

    /// The answer byte for byte: members in the documented order, the stored result's bytes as they are (its
    /// spacing kept: embedded, not parsed and written again).
    @Test func theAnswerIsPinnedByteForByte() {
        let status = JobStatus(
            jobID: "j", state: .retrying, reason: "apple_unavailable", message: "m \"q\" / \u{1}", attempt: 3,
            nextAttemptAtMilliseconds: 1_700_000_000_123, updatedAtMilliseconds: 1, resultJSON: #"{"coins":100, "x" : [1]}"#)
        let expected =
            #"{"attempt":3,"jobId":"j","message":"m \"q\" / \u0001","nextAttemptAt":"2023-11-14T22:13:20.123Z","#
            + #""reason":"apple_unavailable","result":{"coins":100, "x" : [1]},"status":"retrying"}"#
        #expect(String(buffer: JobStatusBody.render(status)) == expected)
    }

    @Test func aRetryingStatusCarriesEveryField() throws {
        let status = JobStatus(
            jobID: "j", state: .retrying, reason: "apple_unavailable", message: "verifyReceipt answered 503",
            attempt: 3, nextAttemptAtMilliseconds: 1_700_000_000_123, updatedAtMilliseconds: 1)
        let json = try object(status)
        #expect(try json.string("status") == "retrying")
        #expect(try json.string("reason") == "apple_unavailable")
        #expect(try json.string("message") == "verifyReceipt answered 503")
        #expect(try json.int("attempt") == 3)
        #expect(try json.string("nextAttemptAt") == "2023-11-14T22:13:20.123Z")
    }

    @Test(arguments: [
        "quote\" backslash\\ slash/ newline\n tab\t nul\u{0} bell\u{7} unit\u{1f}", "ünïcødé ✓ 𝄞", "",
    ])
    func stringsWithAnyCharactersRoundTrip(text: String) throws {
        let status = JobStatus(jobID: text, state: .rejected, reason: text, message: text, updatedAtMilliseconds: 1)
        let json = try object(status)
        #expect(try json.string("jobId") == text)
        #expect(try json.string("reason") == text)
        #expect(try json.string("message") == text)
    }

    /// What Core's reader refuses (`JSONWriterTests` holds the full list) is embedded as a string, never as is.
    @Test(arguments: [
        "{", "{\"a\":}", "[1,]", "{\"a\":1}x", "tru", "01", "\"unterminated", "\"ctrl \u{1}\"", "", "   ",
        "{\"a\":1,\"a\":2}", "\"\\ud800\"", String(repeating: "[", count: 100) + String(repeating: "]", count: 100),
    ])
    func aResultThatIsNotJSONIsEmbeddedAsAString(stored: String) throws {
        let status = JobStatus(jobID: "j", state: .fulfilled, updatedAtMilliseconds: 1, resultJSON: stored)
        #expect(try object(status).string("result") == stored)
    }

    @Test func aMissingStatusIsQueued() throws {
        #expect(String(buffer: JobStatusBody.renderQueued(jobID: "abc\"")) == #"{"jobId":"abc\"","status":"queued"}"#)
    }
}
