import Core
import Testing

@testable import ingest

/// Bytes ingest writes that someone compares: a V1 notification's trigger (the job payload stored in Redis) and
/// the error body (`{"error":{"code","message"}}`), both once `JSONSerialization`'s with sorted keys, now Core's
/// `JSONWriter`'s: pinned here, so that a change of output cannot go unnoticed.
@Suite struct SubmissionJSONTests {
    @Test func aV1TriggerIsWrittenAsBefore() throws {
        let body = #"""
            {"notification_type":"DID_RENEW","password":"s3cret","environment":"PROD","bid":"com.example/app\"x",
             "unified_receipt":{"latest_receipt":"ab c\n/AAA","latest_receipt_info":[{"original_transaction_id":"1000"}]},
             "auto_renew_product_id":"x"}
            """#
        let fields = try JSONFields(JSONReader.parse(Array(body.utf8)))
        let submission = try Submission.notificationV1(fields, sharedSecret: "s3cret")
        let expected =
            #"{"bid":"com.example/app\"x","environment":"PROD","notification_type":"DID_RENEW","#
            + #""unified_receipt":{"latest_receipt":"ab+c/AAA"}}"#
        #expect(String(decoding: submission.payload, as: UTF8.self) == expected)
        #expect(submission.originalTransactionId == "1000")
        #expect(throws: IngestError.self) { try Submission.notificationV1(fields, sharedSecret: "other") }
    }

    @Test func theOriginalTransactionIdIsTheFirstOfItsPlaces() throws {
        func id(_ json: String) throws -> String? {
            guard case .object(let members) = try JSONReader.parse(Array(json.utf8)) else { return nil }
            return Submission.v1OriginalTransactionId(members)
        }
        #expect(try id(#"{"unified_receipt":{"pending_renewal_info":[{"original_transaction_id":"7"}]}}"#) == "7")
        #expect(try id(#"{"original_transaction_id":"9","unified_receipt":{"latest_receipt_info":[]}}"#) == "9")
        #expect(try id(#"{"original_transaction_id":""}"#) == nil)
        #expect(try id(#"{"original_transaction_id":7}"#) == nil)
        #expect(try id("{\"original_transaction_id\":\"\(String(repeating: "1", count: 65))\"}") == nil)
    }

    /// `/` stays `\/` in error bodies, as `JSONSerialization` wrote it.
    @Test func anErrorBodyIsWrittenAsBefore() {
        let body = String(decoding: IngestError.tooManyWaiters().body, as: UTF8.self)
        #expect(
            body
                == #"{"error":{"code":"too_many_waiters","message":"too many requests wait for results; submit without ?wait= "#
                + #"and poll GET \/v1\/jobs\/{id}"}}"#)
        #expect(
            String(decoding: IngestError.invalidRequest("a \"b\"\n").body, as: UTF8.self)
                == #"{"error":{"code":"invalid_request","message":"a \"b\"\n"}}"#)
    }
}
