import AppStore
import Foundation
import Hummingbird

extension ServerAPIRoutes {
    static func sign(_ transaction: SimTransaction, _ context: SimContext) throws(APIErrorBody) -> String {
        do { return try context.sign(transaction) } catch { throw .generalInternalRetryable }
    }

    /// Get Transaction Info: `{"signedTransactionInfo"}`.
    func transactionInfo(id: String?, bid: String, environment: AppStoreEnvironment) throws(APIErrorBody) -> Response {
        let signed = try withLedger { ledger, context throws(APIErrorBody) in
            try Self.sign(try lookup(id, in: ledger, bid: bid, environment: environment), context)
        }
        return JSONBody.response(["signedTransactionInfo": signed])
    }

    /// Get Transaction History v2: the customer's transactions, filtered and sorted, a page at a time;
    /// `revision` is the opaque position of the next page.
    func history(id: String?, query: QueryItems, bid: String, environment: AppStoreEnvironment) throws(APIErrorBody) -> Response {
        struct Body: Encodable {
            var revision: String
            var hasMore: Bool
            var bundleId: String
            var appAppleId: Int64
            var environment: String
            var signedTransactions: [String]
        }
        var offset = 0
        if let revision = query["revision"], !revision.isEmpty {
            guard let value = PageToken.decode(String(revision), kind: "h") else { throw .invalidRevision }
            offset = value
        }
        let filter = try HistoryFilter(query)
        let pageSize = store.configuration.pageSize
        let appAppleId = store.configuration.appAppleId(for: bid)
        return try withLedger { ledger, context throws(APIErrorBody) in
            let transaction = try lookup(id, in: ledger, bid: bid, environment: environment)
            var all = ledger.customerTransactions(of: transaction).filter { filter.matches($0, ledger: ledger) }
            if filter.descending { all.reverse() }
            let page = all.dropFirst(offset).prefix(pageSize)
            let next = min(all.count, offset + page.count)
            var signed: [String] = []
            for item in page { signed.append(try Self.sign(item, context)) }
            return JSONBody.response(
                Body(
                    revision: PageToken.encode(next, kind: "h"), hasMore: next < all.count, bundleId: bid,
                    appAppleId: appAppleId, environment: environment.rawValue, signedTransactions: signed))
        }
    }

    /// Get All Subscription Statuses: the customer's auto-renewable subscriptions by subscription group,
    /// each with its status, latest signed transaction and signed renewal info.
    func statuses(id: String?, query: QueryItems, bid: String, environment: AppStoreEnvironment) throws(APIErrorBody) -> Response {
        struct Item: Encodable {
            var status: Int
            var originalTransactionId: String
            var signedTransactionInfo: String
            var signedRenewalInfo: String
        }
        struct Group: Encodable {
            var subscriptionGroupIdentifier: String
            var lastTransactions: [Item]
        }
        struct Body: Encodable {
            var environment: String
            var bundleId: String
            var appAppleId: Int64
            var data: [Group]
        }
        var wanted: Set<Int> = []
        for raw in query[values: "status"] {
            guard let status = Int(raw), (1...5).contains(status) else {
                throw APIErrorBody(errorCode: 4_000_031, errorMessage: "Invalid status.", status: .badRequest)
            }
            wanted.insert(status)
        }
        let appAppleId = store.configuration.appAppleId(for: bid)
        return try withLedger { ledger, context throws(APIErrorBody) in
            let transaction = try lookup(id, in: ledger, bid: bid, environment: environment)
            var originals: [String] = []
            for item in ledger.customerTransactions(of: transaction) where !originals.contains(item.originalTransactionId) {
                originals.append(item.originalTransactionId)
            }
            var groups: [(String, [Item])] = []
            for original in originals {
                guard let subscription = ledger.subscriptions[original], let latest = ledger.latest(of: original) else { continue }
                if !wanted.isEmpty && !wanted.contains(subscription.status.rawValue) { continue }
                let renewal: String
                do { renewal = try context.sign(subscription, latest: latest) } catch { throw .generalInternalRetryable }
                let item = Item(
                    status: subscription.status.rawValue, originalTransactionId: original,
                    signedTransactionInfo: try Self.sign(latest, context), signedRenewalInfo: renewal)
                if let index = groups.firstIndex(where: { $0.0 == subscription.subscriptionGroupIdentifier }) {
                    groups[index].1.append(item)
                } else {
                    groups.append((subscription.subscriptionGroupIdentifier, [item]))
                }
            }
            return JSONBody.response(
                Body(
                    environment: environment.rawValue, bundleId: bid, appAppleId: appAppleId,
                    data: groups.map { Group(subscriptionGroupIdentifier: $0.0, lastTransactions: $0.1) }))
        }
    }

    /// Send Consumption Information (`version` `v1` or `v2`): the body is recorded with the endpoint's version
    /// (see `GET /sim/consumption/{id}`); `202`. A v2 body is checked as Apple does (``checkConsumptionV2(_:)``).
    func consumption(
        id: String?, version: String, body: ByteBuffer?, bid: String, environment: AppStoreEnvironment
    ) throws(APIErrorBody) -> Response {
        guard let body, var object = try? JSONSerialization.jsonObject(with: Data(body.readableBytesView)) as? [String: Any]
        else {
            throw .badRequest
        }
        if version == "v2" { try Self.checkConsumptionV2(Data(body.readableBytesView)) }
        object["sim.endpoint"] = version
        let recorded = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data()
        try withLedger { ledger, _ throws(APIErrorBody) in
            let transaction = try lookup(id, in: ledger, bid: bid, environment: environment)
            ledger.consumptionInfo[transaction.transactionId] = recorded
        }
        return Response(status: .accepted)
    }

    /// Apple's rules for a v2 `ConsumptionRequest`: `customerConsented` must be `true`; `deliveryStatus` one of
    /// Apple's five values; `consumptionPercentage` 0–100000, and `0` unless `DELIVERED`; `refundPreference`
    /// `DECLINE`, `GRANT_FULL` or `GRANT_PRORATED` (this one only with a percentage above 0);
    /// `sampleContentProvided` a Boolean.
    static func checkConsumptionV2(_ body: Data) throws(APIErrorBody) {
        struct V2: Decodable {
            var customerConsented: Bool
            var consumptionPercentage: Int?
            var deliveryStatus: String
            var refundPreference: String?
            var sampleContentProvided: Bool
        }
        func invalid(_ code: Int, _ message: String) -> APIErrorBody {
            APIErrorBody(errorCode: code, errorMessage: message, status: .badRequest)
        }
        guard let request = try? JSONDecoder().decode(V2.self, from: body) else { throw .badRequest }
        guard request.customerConsented else { throw invalid(4_000_101, "Invalid customer consented.") }
        let statuses = [
            "DELIVERED", "UNDELIVERED_QUALITY_ISSUE", "UNDELIVERED_WRONG_ITEM", "UNDELIVERED_SERVER_OUTAGE",
            "UNDELIVERED_OTHER",
        ]
        guard statuses.contains(request.deliveryStatus) else { throw invalid(4_000_099, "Invalid delivery status.") }
        if let share = request.consumptionPercentage {
            guard (0...100_000).contains(share), request.deliveryStatus == "DELIVERED" || share == 0 else {
                throw invalid(4_000_104, "Invalid consumption percentage.")
            }
        }
        if let preference = request.refundPreference {
            guard ["DECLINE", "GRANT_FULL", "GRANT_PRORATED"].contains(preference),
                preference != "GRANT_PRORATED" || (request.consumptionPercentage ?? 0) > 0
            else { throw invalid(4_000_105, "Invalid refund preference.") }
        }
    }
}
