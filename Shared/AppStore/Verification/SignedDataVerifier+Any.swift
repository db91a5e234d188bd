import Foundation

extension SignedDataVerifier {
    /// Verifies a JWS of any App Store kind, recognised by its payload's fields: `notificationType` →
    /// notification, `transactionId` → transaction, `receiptType`/`applicationVersion` → app transaction,
    /// `autoRenewStatus`/`autoRenewProductId` → renewal info. The payload is only looked at after its
    /// signature and chain have verified.
    public func verifyAny(_ jws: String) async -> VerificationResult<VerifiedSignedData> {
        let envelope: Envelope
        switch await verifySignature(jws) {
        case .verified(let value): envelope = value
        case .rejected(let failure): return .rejected(failure)
        case .retryable(let failure): return .retryable(failure)
        }
        guard let probe = try? JSONDecoder().decode(KindProbe.self, from: envelope.json) else {
            return .rejected(.init(.invalidFormat, "payload is not a JSON object"))
        }
        if probe.notificationType != nil {
            return await verifyNotification(jws).map { .notification($0) }
        }
        if probe.transactionId != nil {
            return await verifyTransactionDocument(jws).map { .transaction($0) }
        }
        if probe.receiptType != nil || probe.applicationVersion != nil {
            return await verifyAppTransactionDocument(jws).map { .appTransaction($0) }
        }
        if probe.autoRenewStatus != nil || probe.autoRenewProductId != nil || probe.originalTransactionId != nil {
            return await verifyRenewalInfoDocument(jws).map { .renewalInfo($0) }
        }
        return .rejected(.init(.invalidFormat, "payload is not a notification, transaction, renewal info or app transaction"))
    }

    /// The fields that tell the kinds apart.
    private struct KindProbe: Decodable {
        var notificationType: String?
        var transactionId: String?
        var originalTransactionId: String?
        var autoRenewStatus: Int?
        var autoRenewProductId: String?
        var receiptType: String?
        var applicationVersion: String?
    }
}
