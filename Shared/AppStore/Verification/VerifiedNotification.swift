import Foundation

/// A verified V2 notification with its nested signed data, each verified with the same rules.
package struct VerifiedNotification: Sendable {
    /// The notification payload; its `data.signedTransactionInfo`/`signedRenewalInfo` are the raw JWS.
    package let payload: ResponseBodyV2DecodedPayload
    /// The notification's JSON as signed.
    package let json: Data
    /// The verified `data.signedTransactionInfo`, when present.
    package let transaction: VerifiedDocument<JWSTransactionDecodedPayload>?
    /// The verified `data.signedRenewalInfo`, when present.
    package let renewalInfo: VerifiedDocument<JWSRenewalInfoDecodedPayload>?

    package init(
        payload: ResponseBodyV2DecodedPayload,
        json: Data,
        transaction: VerifiedDocument<JWSTransactionDecodedPayload>?,
        renewalInfo: VerifiedDocument<JWSRenewalInfoDecodedPayload>?
    ) {
        self.payload = payload
        self.json = json
        self.transaction = transaction
        self.renewalInfo = renewalInfo
    }
}
