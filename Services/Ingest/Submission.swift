import Foundation
import Pipeline

/// A checked submission, ready to enqueue: what kind of job and the exact bytes to carry.
struct Submission: Sendable {
    var kind: JobKind
    var payload: [UInt8]
    var orderNo: String?

    /// Largest receipt accepted (base64 characters, after normalization).
    static let maxReceiptBytes = 1 << 20
    /// Largest notification body accepted.
    static let maxNotificationBytes = 64 << 10
    /// Largest client submission body (a receipt plus JSON around it).
    static let maxClientBodyBytes = (1 << 20) + (16 << 10)

    /// `POST /v1/receipts` `{"receipt", "orderNo"?}`: the receipt with `+` restored from spaces and all
    /// whitespace removed, at most 1 MiB of base64.
    static func receipt(body: [UInt8]) throws(IngestError) -> Submission {
        let object = try jsonObject(body)
        guard let raw = object["receipt"] as? String, !raw.isEmpty else {
            throw .invalidReceipt("receipt must be a non-empty base64 string")
        }
        var normalized: [UInt8] = []
        normalized.reserveCapacity(raw.utf8.count)
        for byte in raw.utf8 {
            switch byte {
            case UInt8(ascii: " "): normalized.append(UInt8(ascii: "+"))  // form-encoding turned '+' into ' '
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): continue
            default: normalized.append(byte)
            }
        }
        guard normalized.count <= maxReceiptBytes else { throw .payloadTooLarge(limit: maxReceiptBytes) }
        guard normalized.allSatisfy(isBase64), Data(base64Encoded: Data(normalized)) != nil else {
            throw .invalidReceipt("receipt is not valid base64")
        }
        return Submission(kind: .receipt, payload: normalized, orderNo: try orderNo(object))
    }

    /// `POST /v1/transactions` `{"signedTransaction", "orderNo"?}`: a structurally valid JWS.
    static func transaction(body: [UInt8]) throws(IngestError) -> Submission {
        let object = try jsonObject(body)
        guard let jws = object["signedTransaction"] as? String, !jws.isEmpty else {
            throw .invalidJWS("signedTransaction must be a non-empty JWS string")
        }
        try JWSStructure.check(jws)
        return Submission(kind: .transaction, payload: Array(jws.utf8), orderNo: try orderNo(object))
    }

    /// `POST /v1/apple/notifications`: V2 `{"signedPayload"}` (JWS checked) or V1 (`notification_type`);
    /// the payload is the body byte-for-byte.
    static func notification(body: [UInt8]) throws(IngestError) -> Submission {
        /// The only members ingest looks at; decoding still validates the whole body as JSON.
        struct Fields: Decodable {
            var signedPayload: String?
            var notificationType: String?
            var hasSignedPayload = false

            enum CodingKeys: String, CodingKey {
                case signedPayload
                case notificationType = "notification_type"
            }

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                hasSignedPayload = container.contains(.signedPayload)
                signedPayload = try? container.decode(String.self, forKey: .signedPayload)
                notificationType = try? container.decode(String.self, forKey: .notificationType)
            }
        }
        guard !body.isEmpty else { throw .invalidJSON("the body is empty") }
        let fields: Fields
        do {
            fields = try JSONDecoder().decode(Fields.self, from: Data(body))
        } catch {
            throw .invalidJSON()
        }
        if fields.hasSignedPayload {
            guard let jws = fields.signedPayload else { throw .invalidJWS("signedPayload must be a string") }
            try JWSStructure.check(jws)
            return Submission(kind: .notificationV2, payload: body)
        }
        if let type = fields.notificationType, !type.isEmpty {
            return Submission(kind: .notificationV1, payload: body)
        }
        throw .unknownNotification()
    }

    static func jsonObject(_ body: [UInt8]) throws(IngestError) -> [String: Any] {
        guard !body.isEmpty else { throw .invalidJSON("the body is empty") }
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw .invalidJSON()
        }
        return object
    }

    private static func orderNo(_ object: [String: Any]) throws(IngestError) -> String? {
        guard let value = object["orderNo"], !(value is NSNull) else { return nil }
        guard let text = value as? String, !text.isEmpty, text.utf8.count <= 64,
              text.utf8.allSatisfy({ JWSStructure.isBase64URL($0) }) else {
            throw .invalidRequest("orderNo must be 1-64 letters, digits, '-' or '_'")
        }
        return text
    }

    private static func isBase64(_ byte: UInt8) -> Bool {
        JWSStructure.isBase64URL(byte) && byte != UInt8(ascii: "-") && byte != UInt8(ascii: "_")
            || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/") || byte == UInt8(ascii: "=")
    }
}
