package import AppStore
import Core
import Foundation
package import Logging
package import Pipeline
package import Redis
import ServiceKit

/// Verifies one job with Apple's rules, per kind, and says what it found as a ``VerificationOutcome``:
/// receipts through `verifyReceipt`, StoreKit 2 transactions and V2 notifications through the JWS
/// verifier (optionally confirmed with the App Store Server API), V1 notifications through Apple's answer for their
/// `latest_receipt`.
///
/// Holds only shareable, immutable clients; one instance serves every task of a replica.
package final class JobVerifier: Sendable {
    let configuration: VerifierConfiguration
    let signedData: SignedDataVerifier
    /// Receipts by the deployment's route (`verifyReceipt` or the App Store Server API).
    let receipts: ReceiptRouter
    /// App Store Server API clients per app and environment; empty without an API key.
    let apiClients: AppleAPIClients
    let limiter: FleetRateLimiter
    /// For the ledger's view of a transaction (consumption requests).
    let redis: any RedisCommandExecutor
    let clock: PipelineClock
    let logger: Logger

    package init(
        configuration: VerifierConfiguration, signedData: SignedDataVerifier, receipts: ReceiptCheckers,
        apiClients: AppleAPIClients, limiter: FleetRateLimiter, redis: any RedisCommandExecutor, clock: PipelineClock,
        logger: Logger
    ) {
        self.configuration = configuration
        self.signedData = signedData
        self.receipts = ReceiptRouter(
            configuration: configuration, checkers: receipts, apiClients: apiClients, signedData: signedData,
            acquire: { try await limiter.acquire($0) })
        self.apiClients = apiClients
        self.limiter = limiter
        self.redis = redis
        self.clock = clock
        self.logger = logger
    }

    /// Whether verifying `job` is local work only: a StoreKit 2 transaction's JWS through the chain cache, with
    /// neither the App Store Server API's confirmation nor OCSP online checks, so nothing outside is called.
    func isLocal(_ job: Job) -> Bool {
        job.kind == .transaction && !(configuration.confirmWithAPI && !apiClients.isEmpty)
            && !signedData.configuration.onlineChecks
    }

    /// Verifies `job`; never throws (infrastructure trouble is a retryable outcome). A verified event is placed in the
    /// project of the app Apple signed it for (``placeProject(_:job:)``).
    func verify(_ job: Job) async -> VerificationOutcome {
        let outcome: VerificationOutcome
        switch job.kind {
        case .receipt: outcome = await verifyReceipt(job)
        case .transaction: outcome = await verifyTransaction(job)
        case .notificationV2: outcome = await verifyNotificationV2(job)
        case .notificationV1: outcome = await verifyNotificationV1(job)
        case .operatorCall: outcome = await runOperatorCall(job)
        }
        guard case .verified(let event) = outcome else { return outcome }
        return placeProject(event, job: job)
    }

    /// Places a verified event in its project (docs/PROJECTS.md): the project listing the app Apple signed the data
    /// for, never one a client names. A client's job comes with its user's project (the one whose secret signed the
    /// user's token): a purchase of another project's app is refused, `wrong_project`, so no user is credited in one
    /// project for a purchase made in another's app.
    func placeProject(_ event: PurchaseEvent, job: Job) -> VerificationOutcome {
        guard let project = configuration.project(ofApp: event.bundleId) else {
            return .rejected(VerificationFailure(.wrongProject, "no project lists the app \(event.bundleId ?? "(none)")"))
        }
        if job.source == .client, job.project != project {
            return .rejected(
                VerificationFailure(.wrongProject, "the app \(event.bundleId ?? "") is of project \(project), the user of \(job.project)"))
        }
        var event = event
        event.project = project.label
        return .verified(event)
    }

    /// The payload as UTF-8 text, without ASCII whitespace at its ends. Trimmed as bytes: Foundation's
    /// `trimmingCharacters(in:)` copies the text through UTF-16 on Linux, which was 38 % of the verifier's CPU
    /// per StoreKit 2 job (`perf` under `scripts/bench-cpu`).
    func text(of job: Job) -> String {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || (0x09...0x0D).contains($0) }
        guard let start = job.payload.firstIndex(where: { !isSpace($0) }),
            let end = job.payload.lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(decoding: job.payload[start...end], as: UTF8.self)
    }

    /// A rejection when this deployment does not take data from `environment`.
    func environmentFailure(_ environment: AppStoreEnvironment) -> VerificationFailure? {
        configuration.failure(forDataFrom: environment)
    }

    /// Runs one App Store Server API call about the app `bundleId` (the one Apple signed into the data at hand, already
    /// checked to be configured) for `environment`, with that app's client (its key, its `bid`) under that app's
    /// fleet-wide bucket of `endpoint`; API and rate-limit errors become outcomes.
    func callAPI<Value: Sendable>(
        _ endpoint: AppStoreEndpointClass, bundleId: String?, environment: AppStoreEnvironment,
        _ body: (AppStoreServerAPIClient) async throws -> Value
    ) async -> APIAnswer<Value, VerificationOutcome> {
        let app = bundleId ?? configuration.bundleId
        guard let client = apiClients.client(app, environment) else {
            return .unanswered(
                .rejected(
                    VerificationFailure(
                        "api_not_configured", "no App Store Server API key is configured for \(app) in \(environment)")))
        }
        let bucket = endpoint.bucket(
            prefix: configuration.shared.keys.prefix, sandbox: environment == .sandbox, rateScale: configuration.apiRateScale,
            bundleId: app)
        do {
            try await limiter.acquire(bucket)
            return .answered(try await body(client))
        } catch let error as AppStoreAPIError {
            switch error.verificationResult(as: Bool.self) {
            case .rejected(let failure): return .unanswered(.rejected(failure))
            default: return .unanswered(.retryable(error.verificationFailure, retryAfter: error.retryAfter))
            }
        } catch let error as RateLimitError {
            return .unanswered(
                .retryable(
                    VerificationFailure(.appleRateLimited, error.description), retryAfter: error.retryAfter))
        } catch {
            return .unanswered(
                .retryable(
                    VerificationFailure(.appleUnreachable, "App Store Server API call failed: \(error)"), retryAfter: nil))
        }
    }
}
