import AppStore
import Foundation
import TestSupport
import Testing

/// The unverified peek at a V2 notification (where its job starts, whether the reconciler enqueues it) reads what
/// the notification says: on every notification vector (Apple's and our test-signed ones), its UUID, type, `signedDate` and its transaction's
/// `originalTransactionId`, as `JSONSerialization` reads them; and nothing from what is not a notification.
struct NotificationPeekTests {
    @Test func readsEveryRealNotification() throws {
        let files = try Vectors.allJWS(prefix: "notification-")
        #expect(files.count >= 12)
        var withTransaction = 0
        for (file, jws) in files {
            let json = try #require(HandDecodedPayloadTests.payload(jws))
            let object = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
            let peek = try #require(NotificationPeek(signedPayload: jws), "\(file)")
            #expect(peek.notificationUUID == (object["notificationUUID"] as? String)?.lowercased(), "\(file)")
            #expect(peek.type == object["notificationType"] as? String, "\(file)")
            #expect(peek.signedDate == (object["signedDate"] as? NSNumber)?.int64Value, "\(file)")
            var expected: String?
            if let nested = (object["data"] as? [String: Any])?["signedTransactionInfo"] as? String,
                let inner = HandDecodedPayloadTests.payload(nested),
                let transaction = try JSONSerialization.jsonObject(with: inner) as? [String: Any]
            {
                expected = transaction["originalTransactionId"] as? String
                withTransaction += 1
            }
            #expect(peek.originalTransactionId == expected, "\(file)")
        }
        #expect(withTransaction >= 8)
    }

    @Test func readsNothingFromWhatIsNotANotification() throws {
        let transaction = try Vectors.appleReal("transaction-consumable-sandbox-1.jws").trimmingCharacters(in: .whitespacesAndNewlines)
        let header = "eyJhbGciOiJFUzI1NiJ9"
        func jws(_ payload: String) -> String {
            let encoded = Data(payload.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            return "\(header).\(encoded).c2ln"
        }
        for signedPayload in [
            transaction, "not a jws", jws("[]"), jws(#"{"notificationType":"DID_RENEW"}"#), jws(#"{"notificationUUID":""}"#),
            jws(#"{"notificationUUID":7}"#), jws(#"{"notificationUUID":"u","signedDate":"soon"}"#),
            jws(#"{"notificationUUID":"u","data":"d"}"#),
        ] {
            #expect(NotificationPeek(signedPayload: signedPayload) == nil, "\(signedPayload.prefix(80))")
        }
        let minimal = try #require(NotificationPeek(signedPayload: jws(#"{"notificationUUID":"ABC"}"#)))
        #expect(minimal.notificationUUID == "abc" && minimal.type == "UNKNOWN")
        #expect(minimal.signedDate == nil && minimal.originalTransactionId == nil)
    }
}
