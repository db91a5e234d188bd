import AppStore
import Core
import Foundation
import Pipeline
import Redis
import ServiceKit

extension JobVerifier {
    /// A StoreKit 2 transaction: the JWS verified offline; with `TOLLGATE_CONFIRM_WITH_API=true` Apple's
    /// current version is fetched with Get Transaction Info (so a refund already made is seen), verified
    /// the same way, and used instead.
    func verifyTransaction(_ job: Job) async -> VerificationOutcome {
        let signed = text(of: job)
        let result = await signedData.verifyTransaction(signed)
        return await VerificationOutcome.from(result) { payload in
            var payload = payload
            var jws = signed
            if configuration.confirmWithAPI, !apiClients.isEmpty, let id = payload.transactionId {
                let environment = payload.environment ?? configuration.environment
                let answer = await callAPI(.transactionInfo, bundleId: payload.bundleId, environment: environment) {
                    try await $0.getTransactionInfo(transactionId: id)
                }
                switch answer {
                case .unanswered(let outcome): return outcome
                case .answered(let response):
                    switch await signedData.verifyTransaction(response.signedTransactionInfo) {
                    case .verified(let confirmed) where confirmed.bundleId != payload.bundleId:
                        return .rejected(VerificationFailure(.wrongBundleID, "Apple's confirmation is of another app"))
                    case .verified(let confirmed):
                        payload = confirmed
                        jws = response.signedTransactionInfo
                    case .rejected(let failure): return .rejected(failure)
                    case .retryable(let failure): return .retryable(failure, retryAfter: nil)
                    }
                }
            }
            guard let transaction = PurchaseEventTransaction(signed: payload) else {
                return .rejected(VerificationFailure(.invalidFormat, "the transaction lacks an ID, product or purchase date"))
            }
            let environment = payload.environment ?? configuration.environment
            var event = PurchaseEvent(
                job: job, environment: environment.rawValue, verifiedAt: clock.nowMilliseconds(), transactions: [transaction])
            event.bundleId = payload.bundleId
            if configuration.includeAppleJWS { event.apple = jws }
            return .verified(event)
        }
    }

    /// A V2 notification: `signedPayload` and its nested JWS verified; `TEST` is recorded,
    /// `CONSUMPTION_REQUEST` answered with Send Consumption Information, every other type becomes an event
    /// (`RESCIND_CONSENT` with its verified app transaction's `appTransactionId` when it carries one: `appData` without an app
    /// transaction, which Apple's own library accepts, is an app-level event about the app alone).
    func verifyNotificationV2(_ job: Job) async -> VerificationOutcome {
        // Read with JSONReader: the body is Apple's whole post (about 19 KB for a renewal), read once per notification.
        guard let signedPayload = try? JSONFields(JSONReader.parse(job.payload)).string("signedPayload"), !signedPayload.isEmpty
        else {
            return .rejected(VerificationFailure(.invalidFormat, "the body has no signedPayload"))
        }
        return await VerificationOutcome.from(await signedData.verifyNotification(signedPayload)) { verified in
            let payload = verified.payload
            let uuid = payload.notificationUUID?.lowercased()
            if let uuid,
                let first = await firstJob(verifying: uuid, partition: configuration.shared.keys.partition(ofJob: job.id) ?? .first),
                first != job.id
            {
                return .duplicate(firstJobID: first)
            }
            let environment = payload.declaredEnvironment ?? verified.transaction?.payload.environment ?? configuration.environment
            // The project of the app Apple signed it for (docs/PROJECTS.md): its keys read the job's status.
            let project = configuration.project(ofApp: payload.declaredBundleId)
            switch payload.notificationType {
            case .test:
                return .recorded(result: #"{"recorded":"test_notification"}"#, notificationUUID: uuid, project: project)
            case .consumptionRequest:
                switch await answerConsumptionRequest(verified, environment: environment) {
                case .recorded(let result, _, _): return .recorded(result: result, notificationUUID: uuid, project: project)
                case let other: return other
                }
            default:
                break
            }
            var transactions: [PurchaseEventTransaction] = []
            if let document = verified.transaction {
                guard let transaction = PurchaseEventTransaction(signed: document.payload) else {
                    return .rejected(
                        VerificationFailure(.invalidFormat, "the notification's transaction lacks an ID, product or purchase date"))
                }
                transactions.append(transaction)
            }
            let renewals = verified.renewalInfo.flatMap { PurchaseEventRenewal(signed: $0.payload) }.map { [$0] } ?? []
            let notification = PurchaseEventNotification(
                type: payload.notificationType?.description ?? "UNKNOWN", subtype: payload.subtype?.description,
                notificationUUID: payload.notificationUUID, signedDate: payload.signedDate, version: 2,
                appTransactionId: verified.appTransaction?.payload.appTransactionId)
            var event = PurchaseEvent(
                job: job, environment: environment.rawValue, verifiedAt: clock.nowMilliseconds(),
                transactions: transactions, renewals: renewals, notification: notification)
            event.bundleId = payload.declaredBundleId
            if configuration.includeAppleJWS { event.apple = signedPayload }
            return .verified(event)
        }
    }

    /// The job that verified the notification `uuid` first, when it was not this one; nil when none did (or Redis
    /// cannot say: then the job is verified again, and the ledger's own per-user dedupe still holds). Read in the
    /// partition of the job at hand: every copy of one notification starts in the same partition, its marker's.
    func firstJob(verifying uuid: String, partition: Partition) async -> String? {
        try? await redis.send(
            RedisCommand("HGET", key: configuration.shared.keys.verifiedNotification(uuid: uuid, partition: partition), "job")
        ).string
    }
}
