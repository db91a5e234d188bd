import Core
import Foundation
import Testing

@testable import AppStore

/// `verifyReceipt` answers and V1 notifications read with `JSONReader` (the verifier's path) read as they do through
/// `Codable`: on the four legacy fixtures, and on each with one member at a time swapped for a value of another
/// type (a number for a string, a string for a number, blanks, booleans, null, arrays for objects and back). Both go
/// through the same lenient rules (`LegacyFields`, which `LegacyLenientDecodingTests` and `LegacyModelsTests` pin
/// down); this holds the two ways of reading the document to the same values: integers, fractions, exponents, nulls.
@Suite struct LegacyReaderTests {
    static var replacements: [Any] {
        [
            12, "12", " 12 ", "true", true, false, 1.0, 1.5, NSNull(), [1], ["a": 1], "2020-11-13 01:09:23 Etc/GMT", 1e3,
            "1600000000000", 1_600_000_000_000, "yes", "NO", 0, "-3", "abc", [["transaction_id": "9"]], ["transaction_id": "9"], "",
        ]
    }

    /// Every path to a member (array elements: the first), depth first.
    static func paths(_ value: Any, _ prefix: [Any] = []) -> [[Any]] {
        if let object = value as? [String: Any] {
            return object.keys.sorted().flatMap { key in [prefix + [key]] + paths(object[key]!, prefix + [key]) }
        }
        if let array = value as? [Any] {
            return array.prefix(1).indices.flatMap { index in [prefix + [index]] + paths(array[index], prefix + [index]) }
        }
        return []
    }

    static func replacing(_ value: Any, at path: [Any], with replacement: Any) -> Any {
        guard let head = path.first else { return replacement }
        if var object = value as? [String: Any], let key = head as? String, let member = object[key] {
            object[key] = replacing(member, at: Array(path.dropFirst()), with: replacement)
            return object
        }
        if var array = value as? [Any], let index = head as? Int {
            array[index] = replacing(array[index], at: Array(path.dropFirst()), with: replacement)
            return array
        }
        return value
    }

    @Test func readsWhatCodableReadsOnEveryFixtureAndEveryMistypedMember() throws {
        var documents = 0
        var readable = 0
        for name in [LegacyFixture.ios6, LegacyFixture.ios7, LegacyFixture.renewed, LegacyFixture.notification] {
            let fixture = try JSONSerialization.jsonObject(with: LegacyFixture.data(name))
            var variants = [fixture]
            for (index, path) in Self.paths(fixture).enumerated() {
                // One replacement per member, chosen by position so that every one is used across the members (the
                // test runs beside timing-sensitive ones: a few hundred documents, not thousands).
                variants.append(Self.replacing(fixture, at: path, with: Self.replacements[index % Self.replacements.count]))
            }
            for variant in variants {
                let data = try JSONSerialization.data(withJSONObject: variant)
                let bytes = Array(data)
                let context = "\(name): \(String(decoding: data.prefix(300), as: UTF8.self))"
                if name == LegacyFixture.notification {
                    let notification = try? JSONDecoder().decode(ServerNotificationV1.self, from: data)
                    #expect((try? ServerNotificationV1.read(bytes)) == notification, "\(context)")
                    readable += notification != nil ? 1 : 0
                } else {
                    let response = try? JSONDecoder().decode(VerifyReceiptResponse.self, from: data)
                    #expect((try? VerifyReceiptResponse.read(bytes)) == response, "\(context)")
                    readable += response != nil ? 1 : 0
                }
                documents += 1
            }
        }
        #expect(documents > 150)
        #expect(readable > documents / 2, "most variants still read: \(readable) of \(documents)")
    }

    /// What the reader refuses outright: not JSON, not an object, a member twice (readers disagree on which counts),
    /// and a `verifyReceipt` answer without a numeric status.
    @Test func refusesWhatIsNotAnAnswer() {
        for text in ["", "not json", "[]", #"{"status":0,"status":21007}"#, #"{"environment":"Sandbox"}"#, #"{"status":"ok"}"#] {
            #expect(throws: (any Error).self, "\(text)") { try VerifyReceiptResponse.read(Array(text.utf8)) }
        }
        #expect((try? VerifyReceiptResponse.read(Array(#"{"status":" 21007 "}"#.utf8)))?.status == 21007)
    }
}
