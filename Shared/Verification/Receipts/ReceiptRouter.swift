import AppStore
import Core
import Foundation
import Pipeline
import ServiceKit

/// Validates receipts (client receipts, V1 notifications' `latest_receipt`, the sweeper's stored receipts) by the
/// deployment's route, ``ReceiptValidationMode``: Apple's `verifyReceipt`, or without it, the receipt proven offline
/// and its purchases taken from the App Store Server API.
///
/// The Server API route, step by step (`validateWithServerAPI`):
/// 1. The receipt's PKCS#7 signature is proven (``ReceiptSignatureVerifier``): without it anyone could write a
///    receipt naming a transaction ID they found or guessed, and Apple's API would answer for that customer.
/// 2. Its bundle ID must be one of the deployment's apps, and its environment the deployment's; that app's key (and
///    bundle ID as `bid`) makes every call below.
/// 3. One of its transaction IDs goes to Get Transaction History (every page, each its own rate-limit token, at most
///    `TOLLGATE_RECEIPT_MAX_HISTORY_PAGES`: past them `receipt_history_too_long`), or, when the receipt holds a single
///    purchase that is no subscription, to Get Transaction Info; each signed transaction is verified like any JWS.
/// 4. Only the transactions the receipt names (by transaction or original transaction ID: a subscription's
///    renewals share the original) are kept, as `verifyReceipt` would: a customer's years-old consumables, which
///    the history also holds and which an earlier backend may have credited, are not credited again.
/// 5. For subscriptions, Get All Subscription Statuses supplies the signed renewal state.
struct ReceiptRouter: Sendable {
    let configuration: VerifierConfiguration
    let legacy: ReceiptClient
    let apiClients: AppleAPIClients
    let signedData: SignedDataVerifier
    let signatures: ReceiptSignatureVerifier
    /// Takes a token of a fleet-wide rate-limit bucket before each API call.
    let acquire: @Sendable (TokenBucket) async throws -> Void

    init(
        configuration: VerifierConfiguration, checkers: ReceiptCheckers, apiClients: AppleAPIClients,
        signedData: SignedDataVerifier, acquire: @escaping @Sendable (TokenBucket) async throws -> Void
    ) {
        self.configuration = configuration
        legacy = checkers.legacy
        signatures = checkers.signatures
        self.apiClients = apiClients
        self.signedData = signedData
        self.acquire = acquire
    }

    /// Validates one receipt. Never throws: infrastructure trouble is retryable. `gate` is asked before every call to
    /// Apple (a user's budget of Apple calls); a refusal makes the validation retryable.
    func validate(_ submitted: String, gate: AppleCallGate? = nil) async -> ReceiptValidation {
        switch configuration.receiptValidation {
        case .verifyReceipt:
            return await validateWithVerifyReceipt(submitted, gate: gate)
        case .serverAPI:
            switch await validateWithServerAPI(submitted, gate: gate) {
            case .validated(let validation): return validation
            case .cannotProve(let failure): return ReceiptValidation(.rejected(failure))
            }
        case .auto:
            guard !apiClients.isEmpty else { return await validateWithVerifyReceipt(submitted, gate: gate) }
            switch await validateWithServerAPI(submitted, gate: gate) {
            case .validated(let validation): return validation
            case .cannotProve: return await validateWithVerifyReceipt(submitted, gate: gate)
            }
        }
    }

    /// Apple's `verifyReceipt`, normalized.
    func validateWithVerifyReceipt(_ submitted: String, gate: AppleCallGate?) async -> ReceiptValidation {
        let verification = await legacy.verify(submitted, gate: gate)
        return ReceiptValidation(
            verification.result.map { receipt in
                ValidatedReceipt(
                    environment: receipt.environment,
                    transactions: receipt.transactions.map(PurchaseEventTransaction.init(receipt:)),
                    renewals: receipt.renewals.map(PurchaseEventRenewal.init(receipt:)),
                    latestReceipt: receipt.latestReceipt, route: .verifyReceipt, bundleId: receipt.bundleId)
            }, retryAfter: verification.retryAfter)
    }

    /// What the Server API route made of a receipt.
    enum ServerAPIStep {
        /// A final answer (verified, rejected or retryable).
        case validated(ReceiptValidation)
        /// The receipt cannot be proven offline (not an app receipt, not signed by a trusted chain, no API key for
        /// its environment): `auto` asks `verifyReceipt` instead, `server-api` refuses it with this failure.
        case cannotProve(VerificationFailure)
    }

    func validateWithServerAPI(_ submitted: String, gate: AppleCallGate?) async -> ServerAPIStep {
        let text: String
        switch ReceiptData.sanitize(submitted, maximumLength: legacy.configuration.maximumReceiptLength) {
        case .success(let cleaned): text = cleaned
        case .failure(let failure): return .validated(ReceiptValidation(.rejected(failure)))
        }
        guard let data = Data(base64Encoded: text) else {
            return .validated(.rejected(.invalidReceipt, "the receipt is not base64"))
        }
        let bytes = Array(data)
        if TransactionReceipt(decoded: bytes) != nil {
            return .cannotProve(
                VerificationFailure(
                    .receiptUnsupported,
                    "an iOS 6 transaction receipt's signature can only be checked by verifyReceipt; send the app receipt"))
        }
        let receipt: AppReceipt
        switch await signatures.verify(bytes) {
        case .success(let proven): receipt = proven
        case .failure(let failure) where failure.code == .receiptTooManyCertificates:
            // No receipt Apple made looks like this: refused by every route, Apple not asked.
            return .validated(ReceiptValidation(.rejected(failure)))
        case .failure(let failure): return .cannotProve(failure)
        }
        guard let app = configuration.app(receipt.bundleId) else {
            return .validated(.rejected(.wrongBundleID, "the receipt is for another app"))
        }
        guard let environment = receipt.environment else {
            return .validated(
                .rejected(.wrongEnvironment, "a receipt of type '\(receipt.receiptType ?? "none")' has no App Store environment"))
        }
        if let failure = configuration.failure(forDataFrom: environment) {
            return .validated(ReceiptValidation(.rejected(failure)))
        }
        guard let client = apiClients.client(app.bundleId, environment) else {
            return .cannotProve(
                VerificationFailure(
                    "api_not_configured", "no App Store Server API key is configured for \(app.bundleId) in \(environment)"))
        }
        var validation = await purchases(of: receipt, environment: environment, client: client, gate: gate)
        if case .verified(var validated) = validation.result {
            validated.bundleId = app.bundleId
            validation.result = .verified(validated)
        }
        return .validated(validation)
    }

    /// Steps 3 to 5: the receipt's purchases as Apple's signed transactions and renewal state.
    func purchases(
        of receipt: AppReceipt, environment: AppStoreEnvironment, client: AppStoreServerAPIClient, gate: AppleCallGate?
    ) async -> ReceiptValidation {
        // The client is of the receipt's app: its bundle ID names the rate budget every call below takes from.
        let app = client.configuration.bundleId
        let named = Set(receipt.transactionIdentifiers)
        guard let query = receipt.purchases.lazy.compactMap({ $0.transactionId ?? $0.originalTransactionId }).first else {
            return ReceiptValidation(
                .verified(
                    ValidatedReceipt(environment: environment, transactions: [], renewals: [], route: .serverAPI)))
        }
        let signedTransactions: [String]
        if receipt.purchases.count == 1, receipt.purchases[0].expiresDate == nil, let id = receipt.purchases[0].transactionId {
            // One purchase that is no subscription: Get Transaction Info is the whole answer, under its own bucket.
            switch await call(.transactionInfo, environment, app, gate, { try await client.getTransactionInfo(transactionId: id) }) {
            case .answered(let info): signedTransactions = [info.signedTransactionInfo]
            case .unanswered(let validation): return validation
            }
        } else {
            // Each page is its own call to Apple: its own token of the bucket and of the user's budget.
            let limit = configuration.receiptMaxHistoryPages
            let history = await call(.transactionHistory, environment, app, gate, tokensPerPage: true) {
                try await client.getTransactionHistory(transactionId: query, pageLimit: limit) {
                    try await take(.transactionHistory, environment, app, gate)
                }
            }
            switch history {
            case .answered(let pages): signedTransactions = pages
            case .unanswered(let validation): return validation
            }
        }
        var transactions: [PurchaseEventTransaction] = []
        var seen = Set<String>()
        for jws in signedTransactions {
            switch await signedData.verifyTransaction(jws) {
            case .verified(let payload):
                guard let transaction = PurchaseEventTransaction(signed: payload) else {
                    return .rejected(.invalidFormat, "a transaction in Apple's history lacks an ID, product or purchase date")
                }
                let belongs = named.contains(transaction.transactionId) || named.contains(transaction.originalTransactionId)
                if belongs, seen.insert(transaction.transactionId).inserted { transactions.append(transaction) }
            case .rejected(let failure): return ReceiptValidation(.rejected(failure))
            case .retryable(let failure): return ReceiptValidation(.retryable(failure))
            }
        }
        guard transactions.contains(where: { $0.transactionId == query || $0.originalTransactionId == query }) else {
            return .rejected(.receiptRejected, "Apple's transaction history for the receipt does not hold the receipt's transaction")
        }
        var renewals: [PurchaseEventRenewal] = []
        let subscriptions = Set(transactions.filter { $0.expiresDate != nil }.map(\.originalTransactionId))
        if let original = subscriptions.sorted().first {
            switch await call(
                .subscriptionStatus, environment, app, gate, { try await client.getAllSubscriptionStatuses(transactionId: original) })
            {
            case .answered(let status):
                for item in status.data?.flatMap({ $0.lastTransactions ?? [] }) ?? [] {
                    guard let id = item.originalTransactionId, subscriptions.contains(id), let jws = item.signedRenewalInfo else {
                        continue
                    }
                    switch await signedData.verifyRenewalInfo(jws) {
                    case .verified(let payload):
                        if let renewal = PurchaseEventRenewal(signed: payload), subscriptions.contains(renewal.originalTransactionId) {
                            renewals.append(renewal)
                        }
                    case .rejected(let failure): return ReceiptValidation(.rejected(failure))
                    case .retryable(let failure): return ReceiptValidation(.retryable(failure))
                    }
                }
            case .unanswered(let validation): return validation
            }
        }
        transactions.sort { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
        return ReceiptValidation(
            .verified(
                ValidatedReceipt(environment: environment, transactions: transactions, renewals: renewals, route: .serverAPI)))
    }

    /// One API call under its fleet-wide bucket and `gate` (``take(_:_:_:)``; with `tokensPerPage`, `body` takes them
    /// page by page itself); Apple's errors, a missing token and a refused gate become the validation's outcome.
    func call<Value: Sendable>(
        _ endpoint: AppStoreEndpointClass, _ environment: AppStoreEnvironment, _ bundleId: String, _ gate: AppleCallGate?,
        tokensPerPage: Bool = false, _ body: () async throws -> Value
    ) async -> APIAnswer<Value, ReceiptValidation> {
        do {
            if !tokensPerPage { try await take(endpoint, environment, bundleId, gate) }
            return .answered(try await body())
        } catch let refusal as AppleCallRefusal {
            return .unanswered(ReceiptValidation(.retryable(refusal.failure), retryAfter: refusal.retryAfter))
        } catch let limit as PageLimitExceeded {
            let failure = VerificationFailure(
                .receiptHistoryTooLong,
                "the customer's transaction history has more than \(limit.pages) pages (TOLLGATE_RECEIPT_MAX_HISTORY_PAGES)")
            return .unanswered(ReceiptValidation(.rejected(failure)))
        } catch let error as AppStoreAPIError {
            return .unanswered(ReceiptValidation(error.verificationResult(), retryAfter: error.retryAfter))
        } catch let error as RateLimitError {
            let failure = VerificationFailure(.appleRateLimited, error.description)
            return .unanswered(ReceiptValidation(.retryable(failure), retryAfter: error.retryAfter))
        } catch {
            let failure = VerificationFailure(.appleUnreachable, "App Store Server API call failed: \(error)")
            return .unanswered(ReceiptValidation(.retryable(failure)))
        }
    }
}

extension ReceiptRouter {
    /// What one call to Apple takes first: a pass of the user's `gate` (thrown as ``AppStore/AppleCallRefusal``), then
    /// a token of the endpoint's fleet-wide bucket of the app `bundleId`.
    func take(
        _ endpoint: AppStoreEndpointClass, _ environment: AppStoreEnvironment, _ bundleId: String, _ gate: AppleCallGate?
    ) async throws {
        if let gate, let refusal = await gate() { throw refusal }
        try await acquire(
            endpoint.bucket(
                prefix: configuration.shared.keys.prefix, sandbox: environment == .sandbox, rateScale: configuration.apiRateScale,
                bundleId: bundleId))
    }
}

/// The parts of receipt validation that need no Redis: `verifyReceipt`'s client and the offline signature check.
package struct ReceiptCheckers: Sendable {
    let legacy: ReceiptClient
    let signatures: ReceiptSignatureVerifier
}
