import AppStore
import Foundation
import Logging
import Pipeline
import ServiceKit

extension JobVerifier {
    /// Answers a verified `CONSUMPTION_REQUEST` with Send Consumption Information (v2; the V1 body with
    /// `TOLLGATE_CONSUMPTION_API=v1`), built from the ledger's view of the transaction (``LedgerView``) — but only
    /// when the app's backend recorded the owner's consent (`PUT /v1/users/{id}/consent`): `customerConsented` is
    /// never claimed otherwise. Without it nothing is sent and the job ends `fulfilled` with
    /// `"sent":false,"reason":"no_customer_consent"` (also logged with that reason), as when no user owns the
    /// transaction yet.
    ///
    /// What v2 sends: `customerConsented: true`; `deliveryStatus` `DELIVERED` when the ledger holds the
    /// transaction, else `UNDELIVERED_OTHER`; `consumptionPercentage` for a consumable (``LedgerView/consumedShare``,
    /// `0` when not delivered), omitted for other products; `refundPreference` from `TOLLGATE_REFUND_PREFERENCE`
    /// (`1` → `GRANT_FULL`, `2` → `DECLINE`, otherwise none); `sampleContentProvided` from
    /// `TOLLGATE_SAMPLE_CONTENT_PROVIDED`.
    ///
    /// Without an API key the request is recorded and not answered (`"sent": false`, `api_not_configured`). Apple
    /// and Redis errors are retried like every other Apple call.
    func answerConsumptionRequest(_ verified: VerifiedNotification, environment: AppStoreEnvironment) async -> VerificationOutcome {
        guard let transaction = verified.transaction?.payload, let transactionId = transaction.transactionId else {
            return .rejected(VerificationFailure(.invalidFormat, "the consumption request names no transaction"))
        }
        guard apiClients.client(verified.payload.declaredBundleId ?? configuration.bundleId, environment) != nil else {
            logger.warning(
                "Consumption request not answered: no App Store Server API key",
                metadata: ["transaction.id": "\(transactionId)", "reason": "api_not_configured"])
            return .recorded(result: #"{"recorded":"consumption_request","sent":false,"reason":"api_not_configured"}"#)
        }
        // The ledger of the project of the app Apple signed the request for (docs/PROJECTS.md).
        guard let project = configuration.project(ofApp: verified.payload.declaredBundleId) else {
            return .rejected(VerificationFailure(.wrongProject, "no project lists the consumption request's app"))
        }
        let view: LedgerView
        do {
            view = try await LedgerView.read(
                on: redis,
                keys: configuration.shared.keys.inProject(project).on(
                    LedgerSide.of(environment: environment.rawValue, deploymentIsProduction: configuration.environment == .production)),
                transactionId: transactionId,
                originalTransactionId: transaction.originalTransactionId ?? transactionId)
        } catch {
            return .retryable(VerificationFailure("ledger_unavailable", "cannot read the ledger: \(error)"), retryAfter: nil)
        }
        guard view.consented else {
            logger.notice(
                "Consumption request not answered: the customer's consent is not recorded",
                metadata: [
                    "transaction.id": "\(transactionId)", "reason": "no_customer_consent",
                    "owner.known": "\(view.owner != nil)",
                ])
            return .recorded(result: #"{"recorded":"consumption_request","sent":false,"reason":"no_customer_consent"}"#)
        }
        if configuration.consumptionAPIVersion == 1 {
            let request = consumptionRequest(for: transaction, delivered: view.delivered)
            let answer = await callAPI(.consumption, bundleId: verified.payload.declaredBundleId, environment: environment) {
                try await $0.sendConsumptionInformation(transactionId: transactionId, request)
            }
            if case .unanswered(let outcome) = answer { return outcome }
            return .recorded(
                result: #"{"recorded":"consumption_request","sent":true,"api":"v1","deliveryStatus":"#
                    + "\(request.deliveryStatus ?? 0)}")
        }
        let request = consumptionRequestV2(view)
        let answer = await callAPI(.consumption, bundleId: verified.payload.declaredBundleId, environment: environment) {
            try await $0.sendConsumptionInformation(transactionId: transactionId, request)
        }
        if case .unanswered(let outcome) = answer { return outcome }
        return .recorded(
            result: #"{"recorded":"consumption_request","sent":true,"api":"v2","deliveryStatus":""#
                + request.deliveryStatus.rawValue + #""}"#)
    }

    /// The v2 body for the ledger's view of the transaction (see ``answerConsumptionRequest(_:environment:)``);
    /// only called once consent is recorded.
    func consumptionRequestV2(_ view: LedgerView) -> ConsumptionRequestV2 {
        let preference: ConsumptionRequestV2.RefundPreference? =
            switch configuration.refundPreference {
            case 1: .grantFull
            case 2: .decline
            default: nil
            }
        return ConsumptionRequestV2(
            customerConsented: view.consented, consumptionPercentage: view.delivered ? view.consumedShare : 0,
            deliveryStatus: view.delivered ? .delivered : .undeliveredOther, refundPreference: preference,
            sampleContentProvided: configuration.sampleContentProvided)
    }

    /// The V1 body sent for `transaction` with `TOLLGATE_CONSUMPTION_API=v1` (only once consent is recorded):
    /// `deliveryStatus` `0` when the ledger holds the transaction, else `5`; `refundPreference` as configured; the
    /// fields the ledger does not track as `0` ("undeclared").
    func consumptionRequest(for transaction: JWSTransactionDecodedPayload, delivered: Bool) -> ConsumptionRequest {
        ConsumptionRequest(
            customerConsented: true, consumptionStatus: 0, platform: 0,
            sampleContentProvided: configuration.sampleContentProvided,
            deliveryStatus: delivered ? 0 : 5, appAccountToken: transaction.appAccountToken ?? "", accountTenure: 0, playTime: 0,
            lifetimeDollarsRefunded: 0, lifetimeDollarsPurchased: 0, userStatus: 0,
            refundPreference: configuration.refundPreference)
    }
}
