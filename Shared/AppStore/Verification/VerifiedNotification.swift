package import Foundation

/// A verified V2 notification with its nested signed data, each verified with the same rules.
package struct VerifiedNotification: Sendable {
    /// The notification payload; its `data.signedTransactionInfo`/`signedRenewalInfo` and
    /// `appData.signedAppTransactionInfo` are the raw JWS.
    package let payload: ResponseBodyV2DecodedPayload
    /// The notification's JSON as signed.
    package let json: Data
    /// The verified `data.signedTransactionInfo`, when present.
    package let transaction: VerifiedDocument<JWSTransactionDecodedPayload>?
    /// The verified `data.signedRenewalInfo`, when present.
    package let renewalInfo: VerifiedDocument<JWSRenewalInfoDecodedPayload>?
    /// The verified `appData.signedAppTransactionInfo`, when present (`RESCIND_CONSENT`).
    package let appTransaction: VerifiedDocument<AppTransaction>?

    package init(
        payload: ResponseBodyV2DecodedPayload,
        json: Data,
        transaction: VerifiedDocument<JWSTransactionDecodedPayload>?,
        renewalInfo: VerifiedDocument<JWSRenewalInfoDecodedPayload>?,
        appTransaction: VerifiedDocument<AppTransaction>? = nil
    ) {
        self.payload = payload
        self.json = json
        self.transaction = transaction
        self.renewalInfo = renewalInfo
        self.appTransaction = appTransaction
    }
}
