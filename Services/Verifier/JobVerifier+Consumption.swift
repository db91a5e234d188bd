import AppStore
import Foundation
import Pipeline

extension JobVerifier {
    /// Answers a verified `CONSUMPTION_REQUEST` with Send Consumption Information.
    ///
    /// What is sent (the ledger's per-transaction view is not readable from the verifier yet, so only what
    /// is known or allowed as undeclared): `customerConsented: true`; `consumptionStatus: 0`, `platform: 0`,
    /// `accountTenure: 0`, `playTime: 0`, `lifetimeDollarsRefunded: 0`, `lifetimeDollarsPurchased: 0`,
    /// `userStatus: 0` (all "undeclared"); `sampleContentProvided: false`; `deliveryStatus: 0` (delivered:
    /// Tollgate credits every verified transaction); `appAccountToken` from the transaction (or empty);
    /// `refundPreference` from `TOLLGATE_REFUND_PREFERENCE` (default `0`, undeclared).
    ///
    /// Without an API key the request is recorded and not answered (the job ends `fulfilled` with
    /// `"sent": false`). Apple errors are retried like every other Apple call.
    func answerConsumptionRequest(_ verified: VerifiedNotification, environment: AppStoreEnvironment) async -> VerificationOutcome {
        guard let transaction = verified.transaction?.payload, let transactionId = transaction.transactionId else {
            return .rejected(VerificationFailure(.invalidFormat, "the consumption request names no transaction"))
        }
        guard !apiClients.isEmpty else {
            logger.warning("Consumption request not answered: no App Store Server API key",
                           metadata: ["transaction.id": "\(transactionId)"])
            return .recorded(result: #"{"recorded":"consumption_request","sent":false,"reason":"api_not_configured"}"#)
        }
        let request = consumptionRequest(for: transaction)
        let answer = await callAPI(.consumption, environment: environment) {
            try await $0.sendConsumptionInformation(transactionId: transactionId, request)
        }
        switch answer {
        case .failure(let failure): return failure.outcome
        case .success:
            return .recorded(result: #"{"recorded":"consumption_request","sent":true}"#)
        }
    }

    /// The body sent for `transaction` (see ``answerConsumptionRequest(_:environment:)``).
    func consumptionRequest(for transaction: JWSTransactionDecodedPayload) -> ConsumptionRequest {
        ConsumptionRequest(
            customerConsented: true, consumptionStatus: 0, platform: 0, sampleContentProvided: false,
            deliveryStatus: 0, appAccountToken: transaction.appAccountToken ?? "", accountTenure: 0, playTime: 0,
            lifetimeDollarsRefunded: 0, lifetimeDollarsPurchased: 0, userStatus: 0,
            refundPreference: configuration.refundPreference)
    }
}
