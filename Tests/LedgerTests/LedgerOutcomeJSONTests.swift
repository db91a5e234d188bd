import Foundation
import Ledger
import Testing

/// The ledger function's answer read by hand reads what `JSONDecoder` read, and refuses what it refused.
struct LedgerOutcomeJSONTests {
    @Test func readsWhatJSONDecoderReads() throws {
        let answers = [
            #"{"outcome":"fulfilled","coins":300,"transactions":[{"transactionId":"t1","productId":"coins100","result":"applied"}]}"#,
            #"{"outcome":"rejected","reason":"owned_by_another_user","transactions":[]}"#,
            #"{"outcome":"parked","unparked":2,"forwarded":1,"emitted":"notification","persist":"aat-1","claim":true}"#,
            #"{"outcome":"reresolve","claim":false,"transactions":null,"reason":null}"#,
            #"{"outcome":"fulfilled","coins":1e+15}"#,
            #"{"outcome":"fulfilled","coins":-5,"extra":{"ignored":[1,2]}}"#,
            #"{"outcome":"fulfilled","signals":["offer_unsigned","offer_unsigned"]}"#,
            #"{"outcome":"fulfilled","signals":null}"#,
        ]
        for answer in answers {
            let bytes = Array(answer.utf8)
            let reference = try JSONDecoder().decode(LedgerOutcome.self, from: Data(bytes))
            #expect(try LedgerOutcome(json: bytes) == reference, "\(answer)")
        }
        #expect(try LedgerOutcome(json: Array(answers[2].utf8)).persist == "aat-1")
        #expect(try LedgerOutcome(json: Array(answers[2].utf8)).claim == true)
        #expect(try LedgerOutcome(json: Array(answers[6].utf8)).signals == ["offer_unsigned", "offer_unsigned"])
        let refused = [
            #"{"coins":1}"#, #"{"outcome":1}"#, #"{"outcome":"fulfilled","coins":"1"}"#, #"{"outcome":"fulfilled","coins":1.5}"#,
            #"{"outcome":"fulfilled","transactions":{}}"#, #"{"outcome":"fulfilled","transactions":[{"transactionId":"t"}]}"#,
            #"{"outcome":"fulfilled","claim":1}"#, #"{"outcome":"fulfilled","signals":[1]}"#,
            #"{"outcome":"fulfilled","signals":"offer_unsigned"}"#, #"{"outcome":"exploded"}"#, #"{"outcome":""}"#, "[]", "",
        ]
        for answer in refused {
            let bytes = Array(answer.utf8)
            #expect(throws: (any Error).self, "\(answer)") { try JSONDecoder().decode(LedgerOutcome.self, from: Data(bytes)) }
            #expect(throws: (any Error).self, "\(answer)") { try LedgerOutcome(json: bytes) }
        }
    }
}
