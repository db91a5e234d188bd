import AppStore
import Core
import Foundation
import Ledger
import Logging
import Pipeline

/// The verifier's side of ``OperatorCall``: the call made with the CLI's own code (``AccountTokenAssignment``,
/// ``SubscriptionExtensions``, ``OrderLookup``) and its checks, the report written as the job's result. Apple's
/// refusals reject the job with their codes, the CLI's checks with theirs; Apple's trouble is retried as any job's.
///
/// The call runs on this verifier's own long-lived API clients, JWS verifier and Redis client, and takes a token of its
/// app's fleet-wide bucket before every call to Apple as the verifier's other calls do (``operatorAPI``): an operator's
/// job makes no client, transport or connection of its own. No token within the limiter's wait: retried later
/// (`apple_rate_limited`).
extension JobVerifier {
    /// What operator calls ask Apple with: this verifier's clients, limiter and Redis.
    var operatorAPI: OperatorAPI {
        let limiter = limiter
        return OperatorAPI(
            configuration: configuration, signedData: signedData, apiClients: apiClients, redis: redis,
            acquire: { try await limiter.acquire($0) })
    }

    func runOperatorCall(_ job: Job) async -> VerificationOutcome {
        let call: OperatorCall
        do {
            call = try OperatorCall(json: job.payload)
        } catch {
            return .rejected(VerificationFailure(.invalidFormat, "not an operator call: \(error.message)"))
        }
        // The project the key's job carries and the one its payload names are one (ingest writes both).
        if job.source == .client, job.project != call.project {
            return .rejected(
                VerificationFailure(.wrongProject, "the call names project \(call.project), its job \(job.project)"))
        }
        logger.info(
            "operator call", metadata: ["job.id": "\(job.id)", "operator.key": "\(call.by)", "project": "\(call.project)"])
        do {
            return .recorded(
                result: String(decoding: try await Self.result(of: call, api: operatorAPI, logger: logger), as: UTF8.self))
        } catch let error as AppStoreAPIError {
            let failure = error.verificationFailure
            return error.isRetryable ? .retryable(failure, retryAfter: error.retryAfter) : .rejected(failure)
        } catch let error as RateLimitError {
            return .retryable(VerificationFailure(.appleRateLimited, error.description), retryAfter: error.retryAfter)
        } catch let error as VerificationError {
            return .rejected(VerificationFailure(FailureCode(rawValue: error.code), error.message))
        } catch {
            return .retryable(VerificationFailure(.operatorCallFailed, "\(error)"), retryAfter: nil)
        }
    }

    /// Makes the call; the report as JSON.
    static func result(of call: OperatorCall, api: OperatorAPI, logger: Logger) async throws -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        writer.beginObject()
        switch call.operation {
        case .setAccountToken(let otid, let user, let environment):
            let report = try await AccountTokenAssignment.run(
                api: api, originalTransactionId: otid, user: user,
                environment: environment.map { AppStoreEnvironment(rawValue: $0.capitalized) }, project: call.project,
                logger: logger)
            writer.member("op", "set_account_token")
            writer.member("environment", report.environment.rawValue.lowercased())
            writer.member("originalTransactionId", report.originalTransactionId)
            writer.member("productId", report.productId)
            writer.member("userId", report.user)
            writer.member("previousToken", report.previousToken)
            writer.member("appAccountToken", report.token)
            writer.member("tokenCreated", report.tokenCreated)
            writer.member("changed", report.changed)
            writer.member("boundTo", report.boundTo)
            writer.member("userKnown", report.userKnown)
            writer.member("handedOverJobId", report.handedOverJobId)
        case .extend(let otid, let days, let reason, let requestId):
            let request = ExtendRenewalDateRequest(extendByDays: days, extendReasonCode: reason, requestIdentifier: requestId)
            let (environment, answer) = try await SubscriptionExtensions.extend(
                api: api, originalTransactionId: otid, request: request, project: call.project)
            guard answer.success == true else {
                throw VerificationError("extension_refused", "Apple did not extend \(otid) (ineligible, or two extensions this year)")
            }
            writer.member("op", "extend")
            writer.member("environment", environment.rawValue.lowercased())
            writer.member("originalTransactionId", otid)
            writer.member("requestId", requestId)
            writer.member("effectiveDate", answer.effectiveDate.map(CustomerInfo.iso8601))
        case .lookupOrder(let orderId):
            let report = try await OrderLookup.run(api: api, orderId: orderId, project: call.project)
            writer.member("op", "lookup_order")
            writer.member("orderId", report.orderId)
            writer.member("environment", report.environment.rawValue.lowercased())
            writer.array("transactions", report.entries) { entry, writer in
                writer.beginObject()
                switch entry.result {
                case .verified(let transaction):
                    writer.member("verified", true)
                    writer.member("transactionId", transaction.transactionId)
                    writer.member("originalTransactionId", transaction.originalTransactionId)
                    writer.member("productId", transaction.productId)
                    writer.member("purchasedAt", transaction.purchaseDate.map(CustomerInfo.iso8601))
                    writer.member("revokedAt", transaction.revocationDate.map(CustomerInfo.iso8601))
                    writer.member("userId", entry.owner)
                    writer.member("ledgerState", entry.record?.state)
                case .rejected(let failure), .retryable(let failure):
                    // Nothing of an unverified transaction is shown: only why it did not verify.
                    writer.member("verified", false)
                    writer.member("code", failure.code.rawValue)
                }
                writer.endObject()
            }
        }
        writer.member("by", call.by)
        writer.member("project", call.project.label)
        writer.endObject()
        return writer.bytes
    }
}
