import AppStore
import Foundation

/// What a notification in Apple's history says about itself, read WITHOUT verifying: only to decide whether
/// to enqueue it (the verifier checks every signature before anything is trusted). Holds the
/// `notificationUUID`, type, `signedDate` and the `originalTransactionId` of its transaction.
struct NotificationPeek: Sendable, Hashable {
    var notificationUUID: String
    var type: String
    var signedDate: Int64?
    var originalTransactionId: String?

    /// Reads `signedPayload`; nil when it is not a readable notification JWS with a UUID.
    init?(signedPayload: String) {
        guard let payload = Self.payload(of: signedPayload),
            let probe = try? JSONDecoder().decode(Probe.self, from: Data(payload)),
            let uuid = probe.notificationUUID, !uuid.isEmpty
        else { return nil }
        notificationUUID = uuid.lowercased()
        type = probe.notificationType ?? "UNKNOWN"
        signedDate = probe.signedDate
        if let inner = probe.data?.signedTransactionInfo, let bytes = Self.payload(of: inner),
            let transaction = try? JSONDecoder().decode(TransactionProbe.self, from: Data(bytes))
        {
            originalTransactionId = transaction.originalTransactionId
        }
    }

    private static func payload(of jws: String) -> [UInt8]? {
        guard let compact = CompactJWS(jws) else { return nil }
        return compact.decode(compact.payload)
    }

    private struct Probe: Decodable {
        struct Inner: Decodable { var signedTransactionInfo: String? }
        var notificationType: String?
        var notificationUUID: String?
        var signedDate: Int64?
        var data: Inner?
    }

    private struct TransactionProbe: Decodable {
        var originalTransactionId: String?
    }
}
