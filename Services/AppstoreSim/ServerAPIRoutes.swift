import AppStore
import Foundation
import Hummingbird

/// Apple's App Store Server API under `/inApps` (production) and `/sandbox/inApps` (sandbox): every
/// answer carries JWS signed by the simulator's CA, every call needs a valid bearer token, and `api`
/// faults apply after authentication.
struct ServerAPIRoutes: Sendable {
    let store: SimStore
    let faults: FaultInjector
    let dispatcher: NotificationDispatcher
    let authenticator: APIAuthenticator

    func register(on router: Router<BasicRequestContext>) {
        for (prefix, environment) in [("", AppStoreEnvironment.production), ("/sandbox", .sandbox)] {
            let base = prefix + "/inApps"
            router.get("\(base)/v1/transactions/:transactionId") { request, context in
                await guarded(request, environment) { bid throws(APIErrorBody) in
                    try transactionInfo(id: context.parameters.get("transactionId"), bid: bid, environment: environment)
                }
            }
            router.get("\(base)/v2/history/:transactionId") { request, context in
                await guarded(request, environment) { bid throws(APIErrorBody) in
                    try history(
                        id: context.parameters.get("transactionId"), query: QueryItems(request),
                        bid: bid, environment: environment)
                }
            }
            router.get("\(base)/v2/refund/lookup/:transactionId") { request, context in
                await guarded(request, environment) { bid throws(APIErrorBody) in
                    try refundHistory(
                        id: context.parameters.get("transactionId"), revision: QueryItems(request)["revision"],
                        bid: bid, environment: environment)
                }
            }
            router.get("\(base)/v1/lookup/:orderId") { request, context in
                await guarded(request, environment) { bid throws(APIErrorBody) in
                    try lookUpOrder(context.parameters.get("orderId"), bid: bid, environment: environment)
                }
            }
            router.get("\(base)/v1/subscriptions/:transactionId") { request, context in
                await guarded(request, environment) { bid throws(APIErrorBody) in
                    try statuses(
                        id: context.parameters.get("transactionId"), query: QueryItems(request),
                        bid: bid, environment: environment)
                }
            }
            router.post("\(base)/v1/notifications/history") { request, _ in
                let body = try? await request.body.collect(upTo: 1 << 20)
                return await guarded(request, environment) { bid throws(APIErrorBody) in
                    try notificationHistory(
                        body: body, paginationToken: QueryItems(request)["paginationToken"],
                        bid: bid, environment: environment)
                }
            }
            router.post("\(base)/v1/notifications/test") { request, _ in
                await guarded(request, environment) { bid throws(APIErrorBody) in
                    try requestTestNotification(bid: bid, environment: environment)
                }
            }
            router.get("\(base)/v1/notifications/test/:token") { request, context in
                await guarded(request, environment) { bid throws(APIErrorBody) in
                    try testNotificationStatus(token: context.parameters.get("token"), bid: bid, environment: environment)
                }
            }
            registerExtensions(on: router, base: base, environment: environment)
            for version in ["v1", "v2"] {
                router.put("\(base)/\(version)/transactions/consumption/:transactionId") { request, context in
                    let body = try? await request.body.collect(upTo: 1 << 20)
                    return await guarded(request, environment) { bid throws(APIErrorBody) in
                        try consumption(
                            id: context.parameters.get("transactionId"), version: version, body: body, bid: bid,
                            environment: environment)
                    }
                }
            }
        }
    }

    /// Authenticates, applies `api` faults, then runs the handler.
    func guarded(
        _ request: Request, _ environment: AppStoreEnvironment,
        _ handler: (String) async throws(APIErrorBody) -> Response
    ) async -> Response {
        let bid: String
        switch authenticator.authenticate(request.headers[.authorization]) {
        case .success(let value): bid = value
        case .failure(let error): return error.response
        }
        let counter = environment == .sandbox ? "api.sandbox" : "api.production"
        if let fault = faults.decide(.api, environment: environment, counter: counter) {
            if let delay = fault.delay { try? await Task.sleep(for: delay) }
            if let status = fault.status {
                return Self.faultResponse(status: status, retryAfter: fault.retryAfter, errorCode: fault.errorCode)
            }
        }
        do {
            return try await handler(bid)
        } catch {
            return error.response
        }
    }

    static func faultResponse(status: Int, retryAfter: Int, errorCode: Int? = nil) -> Response {
        let code = HTTPResponse.Status(code: status)
        if let errorCode {
            return APIErrorBody(errorCode: errorCode, errorMessage: "Simulated error.", status: code).response
        }
        switch status {
        case 429:
            var response = APIErrorBody.rateLimitExceeded.response
            response.headers[.retryAfter] = String(retryAfter)
            return response
        case 500...599:
            var body = APIErrorBody.generalInternalRetryable
            body.status = code
            return body.response
        default:
            return APIErrorBody(errorCode: status * 10_000, errorMessage: "Simulated error.", status: code).response
        }
    }

    /// The transaction named in the path, in this environment and app, or Apple's error.
    func lookup(_ id: String?, in ledger: SimLedger, bid: String, environment: AppStoreEnvironment) throws(APIErrorBody) -> SimTransaction {
        guard let id, !id.isEmpty, id.count <= 32, id.allSatisfy(\.isASCII), id.allSatisfy(\.isNumber) else {
            throw .invalidTransactionId
        }
        guard let transaction = ledger.transactions[id], transaction.environment == environment, transaction.bundleId == bid else {
            throw .transactionNotFound
        }
        return transaction
    }

    /// Runs `body` on the ledger under the store's lock, with signing context.
    func withLedger<T>(_ body: (inout SimLedger, SimContext) throws(APIErrorBody) -> T) throws(APIErrorBody) -> T {
        var apiError: APIErrorBody?
        let result: T?
        do {
            result = try store.withLedger { ledger, context throws(SimError) -> T? in
                do throws(APIErrorBody) {
                    return try body(&ledger, context)
                } catch {
                    apiError = error
                    return nil
                }
            }
        } catch {
            throw APIErrorBody(errorCode: 5_000_000, errorMessage: "An unknown error occurred.", status: .internalServerError)
        }
        if let apiError { throw apiError }
        guard let result else {
            throw APIErrorBody(errorCode: 5_000_000, errorMessage: "An unknown error occurred.", status: .internalServerError)
        }
        return result
    }
}
