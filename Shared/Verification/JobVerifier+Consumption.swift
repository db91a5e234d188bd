import AppStore
import Foundation
import Pipeline

extension JobVerifier {
    /// Answers a verified `CONSUMPTION_REQUEST` with Send Consumption Information, built from the ledger's
    /// view of the transaction (``LedgerView``).
    ///
    /// What is sent: `customerConsented: true`; `deliveryStatus: 0` (delivered) when the ledger holds the
    /// transaction, else `5` (not delivered, other reason); `appAccountToken` from the transaction (or
    /// empty); `refundPreference` from `TOLLGATE_REFUND_PREFERENCE` (default `0`, undeclared);
    /// `sampleContentProvided: false`; and, because the ledger does not track them, `consumptionStatus`,
    /// `platform`, `accountTenure`, `playTime`, `lifetimeDollarsRefunded`, `lifetimeDollarsPurchased` and
    /// `userStatus` as `0` ("undeclared", which Apple allows).
    ///
    /// Without an API key the request is recorded and not answered (the job ends `fulfilled` with
    /// `"sent": false`). Apple and Redis errors are retried like every other Apple call.
    func answerConsumptionRequest(_ verified: VerifiedNotification, environment: AppStoreEnvironment) async -> VerificationOutcome {
        guard let transaction = verified.transaction?.payload, let transactionId = transaction.transactionId else {
            return .rejected(VerificationFailure(.invalidFormat, "the consumption request names no transaction"))
        }
        guard !apiClients.isEmpty else {
            logger.warning(
                "Consumption request not answered: no App Store Server API key",
                metadata: ["transaction.id": "\(transactionId)"])
            return .recorded(result: #"{"recorded":"consumption_request","sent":false,"reason":"api_not_configured"}"#)
        }
        let view: LedgerView
        do {
            view = try await LedgerView.read(
                on: redis, keys: configuration.shared.keys, transactionId: transactionId,
                originalTransactionId: transaction.originalTransactionId ?? transactionId)
        } catch {
            return .retryable(VerificationFailure("ledger_unavailable", "cannot read the ledger: \(error)"), retryAfter: nil)
        }
        let request = consumptionRequest(for: transaction, delivered: view.delivered)
        let answer = await callAPI(.consumption, environment: environment) {
            try await $0.sendConsumptionInformation(transactionId: transactionId, request)
        }
        switch answer {
        case .failure(let failure): return failure.outcome
        case .success:
            return .recorded(
                result: #"{"recorded":"consumption_request","sent":true,"deliveryStatus":"# + "\(request.deliveryStatus ?? 0)}")
        }
    }

    /// The body sent for `transaction` (see ``answerConsumptionRequest(_:environment:)``).
    func consumptionRequest(for transaction: JWSTransactionDecodedPayload, delivered: Bool) -> ConsumptionRequest {
        ConsumptionRequest(
            customerConsented: true, consumptionStatus: 0, platform: 0, sampleContentProvided: false,
            deliveryStatus: delivered ? 0 : 5, appAccountToken: transaction.appAccountToken ?? "", accountTenure: 0, playTime: 0,
            lifetimeDollarsRefunded: 0, lifetimeDollarsPurchased: 0, userStatus: 0,
            refundPreference: configuration.refundPreference)
    }
}
