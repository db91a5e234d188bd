import Foundation

extension SignedDataVerifier {
    /// Verifies a JWS of any App Store kind, recognised by its payload's fields: `notificationType` →
    /// notification, `transactionId` → transaction, `receiptType`/`applicationVersion` → app transaction,
    /// `autoRenewStatus`/`autoRenewProductId` → renewal info. The payload is only looked at after its
    /// signature and chain have verified.
    package func verifyAny(_ jws: String) async -> VerificationResult<VerifiedSignedData> {
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
            return await verifyNotification(envelope).map { .notification($0) }
        }
        if probe.transactionId != nil {
            return finish(envelope, as: JWSTransactionDecodedPayload.self) { checkTransactionClaims($0) }.map { .transaction($0) }
        }
        if probe.receiptType != nil || probe.applicationVersion != nil {
            return finish(envelope, as: AppTransaction.self) {
                checkApp(bundleId: $0.bundleId, environment: $0.receiptType, appAppleId: $0.appAppleId)
            }.map { .appTransaction($0) }
        }
        if probe.autoRenewStatus != nil || probe.autoRenewProductId != nil || probe.originalTransactionId != nil {
            return finish(envelope, as: JWSRenewalInfoDecodedPayload.self) { checkEnvironment($0.environment) }.map { .renewalInfo($0) }
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
