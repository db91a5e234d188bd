import AppStore
import AppStoreTesting
import Foundation
import Hummingbird

extension ServerAPIRoutes {
    /// Extend a Subscription Renewal Date, the mass extension and its status, Set App Account Token and Get App
    /// Transaction Info.
    func registerExtensions(on router: Router<BasicRequestContext>, base: String, environment: AppStoreEnvironment) {
        router.put("\(base)/v1/subscriptions/extend/:originalTransactionId") { request, context in
            let body = try? await request.body.collect(upTo: 1 << 16)
            return await guarded(request, environment) { bid throws(APIErrorBody) in
                let renewalExtension = try Self.decode(ExtendRenewalDateRequest.self, body)
                let original = context.parameters.get("originalTransactionId") ?? ""
                guard !original.isEmpty, original.count <= 32, original.allSatisfy(\.isNumber) else {
                    throw .invalidTransactionId
                }
                let (answer, notification) = try withLedger { ledger, context throws(APIErrorBody) in
                    try ledger.extendRenewal(
                        originalTransactionId: original, renewalExtension, bid: bid, environment: environment, context: context)
                }
                if let notification { dispatcher.enqueue(notification.notificationUUID) }
                return JSONBody.response(answer)
            }
        }
        router.post("\(base)/v1/subscriptions/extend/mass") { request, _ in
            let body = try? await request.body.collect(upTo: 1 << 16)
            return await guarded(request, environment) { bid throws(APIErrorBody) in
                let mass = try Self.decode(MassExtendRenewalDateRequest.self, body)
                let notifications = try withLedger { ledger, context throws(APIErrorBody) in
                    try ledger.extendAllActive(mass, bid: bid, environment: environment, context: context)
                }
                for notification in notifications { dispatcher.enqueue(notification.notificationUUID) }
                return JSONBody.response(MassExtendRenewalDateResponse(requestIdentifier: mass.requestIdentifier))
            }
        }
        router.get("\(base)/v1/subscriptions/extend/mass/:productId/:requestIdentifier") { request, context in
            await guarded(request, environment) { _ throws(APIErrorBody) in
                let key = (context.parameters.get("productId") ?? "") + "/" + (context.parameters.get("requestIdentifier") ?? "")
                guard let status = store.read({ $0.massExtensions[key] }) else { throw .massExtensionNotFound }
                return JSONBody.response(status)
            }
        }
        // The path parameter shares its name with Get Transaction Info's (the router's rule for one position).
        router.put("\(base)/v1/transactions/:transactionId/appAccountToken") { request, context in
            let body = try? await request.body.collect(upTo: 1 << 16)
            return await guarded(request, environment) { bid throws(APIErrorBody) in
                try setAppAccountToken(
                    id: context.parameters.get("transactionId"), body: body, bid: bid, environment: environment)
            }
        }
        router.get("\(base)/v1/transactions/appTransactions/:transactionId") { request, context in
            await guarded(request, environment) { bid throws(APIErrorBody) in
                let signed = try withLedger { ledger, simContext throws(APIErrorBody) in
                    let transaction = try lookup(
                        context.parameters.get("transactionId"), in: ledger, bid: bid, environment: environment)
                    do {
                        return try simContext.signer.sign(ledger.appTransaction(of: transaction, context: simContext))
                    } catch {
                        throw .generalInternalRetryable
                    }
                }
                return JSONBody.response(AppTransactionInfoResponse(signedAppTransactionInfo: signed))
            }
        }
    }

    /// Set App Account Token: `{"appAccountToken": UUID}` (anything else is `4000183`), then the transaction (`4000006`,
    /// `4040010`), which must be an original one that is not Family Sharing; `200` with no body.
    func setAppAccountToken(id: String?, body: ByteBuffer?, bid: String, environment: AppStoreEnvironment) throws(APIErrorBody)
        -> Response
    {
        struct Body: Decodable { var appAccountToken: String? }
        guard let body, let request = try? JSONDecoder().decode(Body.self, from: Data(body.readableBytesView)) else {
            throw .badRequest
        }
        guard let raw = request.appAccountToken, let token = UUID(uuidString: raw) else { throw .invalidAppAccountTokenUUID }
        try withLedger { ledger, _ throws(APIErrorBody) in
            let transaction = try lookup(id, in: ledger, bid: bid, environment: environment)
            try ledger.setAppAccountToken(token.uuidString.lowercased(), on: transaction)
        }
        return Response(status: .ok)
    }

    private static func decode<T: Decodable>(_ type: T.Type, _ body: ByteBuffer?) throws(APIErrorBody) -> T {
        guard let body, let value = try? JSONDecoder().decode(T.self, from: Data(body.readableBytesView)) else {
            throw .badRequest
        }
        return value
    }
}
