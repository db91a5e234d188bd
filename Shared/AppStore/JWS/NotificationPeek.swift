import Foundation

/// What a V2 notification's `signedPayload` says about itself, read WITHOUT verifying: only to decide whether to
/// enqueue it (the reconciler) and in which partition its job starts (ingest, the reconciler: Po of its
/// `originalTransactionId`, CLUSTER.md). The verifier checks every signature before anything is trusted. Holds the
/// `notificationUUID`, type, `signedDate` and the `originalTransactionId` of its transaction (from the nested
/// `data.signedTransactionInfo`).
package struct NotificationPeek: Sendable, Hashable {
    package var notificationUUID: String
    package var type: String
    package var signedDate: Int64?
    package var originalTransactionId: String?

    /// Reads `signedPayload`; nil when it is not a readable notification JWS with a UUID.
    package init?(signedPayload: String) {
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
