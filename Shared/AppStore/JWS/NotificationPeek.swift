import Core
import Foundation

/// What a V2 notification's `signedPayload` says about itself, read WITHOUT verifying: only to decide whether to
/// enqueue it (the reconciler) and in which partition its job starts (ingest, the reconciler: Po of its
/// `originalTransactionId`, docs/CLUSTER.md §3). The verifier checks every signature before anything is trusted. Holds
/// the `notificationUUID`, type, `signedDate` and the `originalTransactionId` of its transaction (from the nested
/// `data.signedTransactionInfo`).
package struct NotificationPeek: Sendable, Hashable {
    package var notificationUUID: String
    package var type: String
    package var signedDate: Int64?
    package var originalTransactionId: String?

    /// Reads `signedPayload`; nil when it is not a readable notification JWS with a UUID (or a member named here has
    /// another type). Read with ``Core/JSONReader``: ingest peeks at every notification when partitioned.
    package init?(signedPayload: String) {
        guard let payload = Self.payload(of: signedPayload) else { return nil }
        do {
            let probe = try JSONFields(JSONReader.parse(payload))
            guard let uuid = try probe.optionalString("notificationUUID"), !uuid.isEmpty else { return nil }
            notificationUUID = uuid.lowercased()
            type = try probe.optionalString("notificationType") ?? "UNKNOWN"
            signedDate = try probe.optionalInt64("signedDate")
            if let inner = try probe.optionalObject("data")?.optionalString("signedTransactionInfo"),
                let bytes = Self.payload(of: inner), let transaction = try? JSONFields(JSONReader.parse(bytes))
            {
                originalTransactionId = try? transaction.optionalString("originalTransactionId")
            }
        } catch {
            return nil
        }
    }

    private static func payload(of jws: String) -> [UInt8]? {
        guard let compact = CompactJWS(jws) else { return nil }
        return compact.decode(compact.payload)
    }
}
