import AppStore
import Foundation
import Hummingbird

extension ServerAPIRoutes {
    /// Get Refund History v2: the customer's refunded or revoked transactions, a page at a time.
    func refundHistory(id: String?, revision: String?, bid: String, environment: AppStoreEnvironment) throws(APIErrorBody) -> Response {
        struct Body: Encodable {
            var signedTransactions: [String]
            var revision: String
            var hasMore: Bool
        }
        var offset = 0
        if let revision, !revision.isEmpty {
            guard let value = PageToken.decode(revision, kind: "r") else { throw .invalidRevision }
            offset = value
        }
        let pageSize = store.configuration.pageSize
        return try withLedger { ledger, context throws(APIErrorBody) in
            let transaction = try lookup(id, in: ledger, bid: bid, environment: environment)
            let refunded = ledger.customerTransactions(of: transaction).filter { $0.revocationDate != nil }
            let page = refunded.dropFirst(offset).prefix(pageSize)
            let next = min(refunded.count, offset + page.count)
            var signed: [String] = []
            for item in page { signed.append(try Self.sign(item, context)) }
            return JSONBody.response(
                Body(signedTransactions: signed, revision: PageToken.encode(next, kind: "r"), hasMore: next < refunded.count))
        }
    }

    /// Look Up Order ID: `{"status": 0, "signedTransactions"}` for an order the simulator issued in this
    /// environment and app, else `{"status": 1}`.
    func lookUpOrder(_ orderId: String?, bid: String, environment: AppStoreEnvironment) throws(APIErrorBody) -> Response {
        struct Body: Encodable {
            var status: Int
            var signedTransactions: [String]?
        }
        guard let orderId, !orderId.isEmpty, orderId.count <= 64 else { throw .badRequest }
        return try withLedger { ledger, context throws(APIErrorBody) in
            let transactions = (ledger.orders[orderId] ?? []).compactMap { ledger.transactions[$0] }
                .filter { $0.environment == environment && $0.bundleId == bid }
            guard !transactions.isEmpty else { return JSONBody.response(Body(status: 1)) }
            var signed: [String] = []
            for item in transactions { signed.append(try Self.sign(item, context)) }
            return JSONBody.response(Body(status: 0, signedTransactions: signed))
        }
    }
}
