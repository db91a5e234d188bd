import AppStore
import Core
import Pipeline

/// A checked submission, ready to enqueue: what kind of job and the exact bytes to carry.
struct Submission: Sendable {
    var kind: JobKind
    var payload: [UInt8]
    var orderNo: String?
    /// The JWS whose signature must verify before the job is stored (a signed transaction, a V2 notification's
    /// `signedPayload`).
    var signed: String?
    /// A V2 notification's `notificationUUID`, once the door checked that Apple signed it for this app: its identity
    /// for deduplication (``IngestRoutes/dedupeHash(_:source:userID:)``).
    var notificationUUID: String?
    /// A V1 notification's `original_transaction_id`, read unverified before the body is cut down to its trigger:
    /// only a hint of the partition its job starts in (``IngestRoutes/partition(of:source:userID:dedupeHash:)``).
    var originalTransactionId: String?

    /// Largest notification body accepted.
    static let maxNotificationBytes = 64 << 10
    /// What a client submission body may hold besides its receipt or JWS (JSON around it, `orderNo`).
    static let clientEnvelopeBytes = 16 << 10

    /// `POST /v1/receipts` `{"receipt", "orderNo"?}`: the receipt with `+` restored from spaces and all
    /// whitespace removed, at most `maxReceiptBytes` of base64 (`TOLLGATE_MAX_RECEIPT_BYTES`).
    static func receipt(body: [UInt8], maxReceiptBytes: Int) throws(IngestError) -> Submission {
        let object = try jsonFields(body)
        guard case .string(let raw)? = object.members["receipt"], !raw.isEmpty else {
            throw .invalidReceipt("receipt must be a non-empty base64 string")
        }
        let normalized = try normalizedReceipt(raw, maxBytes: maxReceiptBytes)
        return Submission(kind: .receipt, payload: normalized, orderNo: try orderNo(object))
    }

    /// `POST /v1/transactions` `{"signedTransaction", "orderNo"?}`: a structurally valid JWS.
    static func transaction(body: [UInt8]) throws(IngestError) -> Submission {
        let object = try jsonFields(body)
        guard case .string(let jws)? = object.members["signedTransaction"], !jws.isEmpty else {
            throw .invalidJWS("signedTransaction must be a non-empty JWS string")
        }
        try checkStructure(jws)
        return Submission(kind: .transaction, payload: Array(jws.utf8), orderNo: try orderNo(object), signed: jws)
    }

    /// `POST /v1/apple/notifications`: V2 `{"signedPayload"}` (JWS checked; the payload is the body
    /// byte-for-byte) or V1 (`notification_type`, see ``notificationV1(_:sharedSecret:)``). `v1SharedSecret`
    /// nil: V1 is off and refused. With several apps (`v1SharedSecrets`, bundle ID → secret), the password must be the
    /// secret of the app the notification names (`bid`); a notification naming no configured app is refused as a
    /// password mismatch.
    static func notification(
        body: [UInt8], v1SharedSecret: String?, v1SharedSecrets: [String: String] = [:]
    ) throws(IngestError) -> Submission {
        // The whole body is read as JSON (a member twice is refused: readers disagree on which one counts).
        let fields = try jsonFields(body)
        if let signedPayload = fields.members["signedPayload"] {
            guard case .string(let jws) = signedPayload else { throw .invalidJWS("signedPayload must be a string") }
            try checkStructure(jws)
            return Submission(kind: .notificationV2, payload: body, signed: jws)
        }
        if case .string(let type)? = fields.members["notification_type"], !type.isEmpty {
            if !v1SharedSecrets.isEmpty {
                guard case .string(let bid)? = fields.members["bid"], let secret = v1SharedSecrets[bid] else {
                    throw .sharedSecretMismatch()
                }
                return try notificationV1(fields, sharedSecret: secret)
            }
            guard let secret = v1SharedSecret else { throw .v1NotificationsDisabled() }
            return try notificationV1(fields, sharedSecret: secret)
        }
        throw .unknownNotification()
    }

    /// A V1 notification is a trigger, never evidence (docs/ARCHITECTURE.md, invariant 9): its `password` must be the shared
    /// secret (compared in constant time), and what is kept is only what the verifier needs to ask Apple — the
    /// type, `bid`, `environment` and `unified_receipt.latest_receipt` (or the older top-level `latest_receipt`).
    /// The password and the notification's own transaction fields are dropped before anything is stored.
    static func notificationV1(_ fields: JSONFields, sharedSecret: String) throws(IngestError) -> Submission {
        let object = fields.members
        guard case .string(let password)? = object["password"],
            ConstantTime.equal(Array(password.utf8), Array(sharedSecret.utf8))
        else {
            throw .sharedSecretMismatch()
        }
        let unified = object["unified_receipt"]
        guard let raw = text(unified?["latest_receipt"]) ?? text(object["latest_receipt"]), !raw.isEmpty else {
            throw .invalidReceipt("a V1 notification needs a latest_receipt: Tollgate credits only what Apple answers for it")
        }
        let receipt = try normalizedReceipt(raw, maxBytes: maxNotificationBytes)
        // Members in the order `JSONSerialization`'s `.sortedKeys` wrote them: the stored payload is unchanged.
        var trigger = JSONWriter(capacity: receipt.count + 256)
        trigger.beginObject()
        trigger.member("bid", text(object["bid"]).map { String($0.prefix(256)) })
        trigger.member("environment", text(object["environment"]).map { String($0.prefix(256)) })
        trigger.member("notification_type", text(object["notification_type"]) ?? "")
        trigger.key("unified_receipt")
        trigger.beginObject()
        trigger.member("latest_receipt", String(decoding: receipt, as: UTF8.self))
        trigger.endObject()
        trigger.endObject()
        return Submission(kind: .notificationV1, payload: trigger.bytes, originalTransactionId: v1OriginalTransactionId(object))
    }

    /// The `original_transaction_id` a V1 notification names: the first of `unified_receipt.latest_receipt_info`,
    /// else of `unified_receipt.pending_renewal_info`, else the top-level member (older notifications); a string
    /// of at most 64 characters, or nil.
    static func v1OriginalTransactionId(_ object: [String: JSONValue]) -> String? {
        let unified = object["unified_receipt"]
        func first(_ list: JSONValue?) -> JSONValue? {
            guard case .array(let entries)? = list else { return nil }
            return entries.first?["original_transaction_id"]
        }
        let candidates = [
            first(unified?["latest_receipt_info"]), first(unified?["pending_renewal_info"]), object["original_transaction_id"],
        ]
        for case let text? in candidates.map(text) where !text.isEmpty && text.utf8.count <= 64 {
            return text
        }
        return nil
    }

    /// A string value's text; nil for anything else.
    private static func text(_ value: JSONValue?) -> String? {
        guard case .string(let text)? = value else { return nil }
        return text
    }

    /// A receipt with `+` restored from spaces and all whitespace removed; at most `maxBytes` of base64.
    static func normalizedReceipt(_ raw: String, maxBytes: Int) throws(IngestError) -> [UInt8] {
        var normalized: [UInt8] = []
        normalized.reserveCapacity(raw.utf8.count)
        for byte in raw.utf8 {
            switch byte {
            case UInt8(ascii: " "): normalized.append(UInt8(ascii: "+"))  // form-encoding turned '+' into ' '
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): continue
            default: normalized.append(byte)
            }
        }
        guard normalized.count <= maxBytes else { throw .payloadTooLarge(limit: maxBytes) }
        guard !normalized.isEmpty, normalized.withUnsafeBufferPointer({ StandardBase64.isValid($0) }) else {
            throw .invalidReceipt("receipt is not valid base64")
        }
        return normalized
    }

    /// The body as one JSON object read by ``Core/JSONReader`` (strict RFC 8259, a member twice refused): every JSON
    /// body ingest takes.
    static func jsonFields(_ body: [UInt8]) throws(IngestError) -> JSONFields {
        guard !body.isEmpty else { throw .invalidJSON("the body is empty") }
        do {
            return try JSONFields(JSONReader.parse(body))
        } catch {
            throw .invalidJSON()
        }
    }

    /// AppStore's ``JWSStructure`` check, its refusal answered as `400 invalid_jws` or `400 unsupported_algorithm`.
    static func checkStructure(_ jws: String) throws(IngestError) {
        do {
            try JWSStructure.check(jws)
        } catch {
            switch error {
            case .invalidJWS(let message): throw .invalidJWS(message)
            case .unsupportedAlgorithm(let alg): throw .unsupportedAlgorithm(alg)
            }
        }
    }

    /// The optional `orderNo` member: 1–64 base64url characters, or `400 invalid_request`.
    static func orderNo(_ fields: JSONFields) throws(IngestError) -> String? {
        guard let value = fields.members["orderNo"], value != .null else { return nil }
        guard case .string(let text) = value else { return try checkedOrderNo(nil) }
        return try checkedOrderNo(text)
    }

    private static func checkedOrderNo(_ text: String?) throws(IngestError) -> String {
        guard let text, !text.isEmpty, text.utf8.count <= 64, text.utf8.allSatisfy({ JWSStructure.isBase64URL($0) }) else {
            throw .invalidRequest("orderNo must be 1-64 letters, digits, '-' or '_'")
        }
        return text
    }
}
