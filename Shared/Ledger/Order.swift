import Foundation

/// An order: a user's intent to buy one catalog product, created by `POST /v1/orders` before the app calls
/// StoreKit with the order's `appAccountToken`.
///
/// Kept in the hash `tg:{u:<userId>}:order:<orderNo>` (``Keys/order(user:orderNo:)``) with the fields of
/// ``Field``. Ingest writes `order.no`, `user`, `product`, `token`, `state` = `pending` and `created.at`;
/// ingest adds `offer:<offerId>` when it signs a promotional offer with the order's token;
/// the fulfiller sets `state` = `paid`, `paid.at` and `transaction` when a transaction of the same product
/// pays it (a transaction of another product is refused with `product_mismatch` and leaves it `pending`).
package struct Order: Sendable, Hashable, Codable {
    /// Where an order is.
    package enum State: String, Sendable, Hashable, Codable, CaseIterable {
        /// Created, not paid yet.
        case pending
        /// Paid by the transaction in `transactionId`.
        case paid
    }

    package var orderNo: String
    package var userID: String
    package var productId: String
    /// The `appAccountToken` (a lower-case UUID) the app passes to StoreKit.
    package var appAccountToken: String
    package var state: State
    package var createdAtMilliseconds: Int64
    package var paidAtMilliseconds: Int64?
    /// Apple's `transactionId` that paid the order.
    package var transactionId: String?
    /// `sandbox` when a sandbox purchase on the user's sandbox side paid it (``Pipeline/LedgerSide``): a tester's.
    package var paidBySide: String?

    package init(
        orderNo: String, userID: String, productId: String, appAccountToken: String, state: State = .pending,
        createdAtMilliseconds: Int64, paidAtMilliseconds: Int64? = nil, transactionId: String? = nil
    ) {
        self.orderNo = orderNo
        self.userID = userID
        self.productId = productId
        self.appAccountToken = appAccountToken
        self.state = state
        self.createdAtMilliseconds = createdAtMilliseconds
        self.paidAtMilliseconds = paidAtMilliseconds
        self.transactionId = transactionId
    }

    /// A new order number: `ord_` and 24 random lower-case hex digits.
    package static func newOrderNo() -> String {
        "ord_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(24)
    }

    /// A new `appAccountToken`: a random UUID, lower-case.
    package static func newAppAccountToken() -> String { UUID().uuidString.lowercased() }

    /// The hash fields of this order (absent optionals are not written).
    package var fields: [(String, String)] {
        var fields: [(String, String)] = [
            (Field.orderNo, orderNo), (Field.user, userID), (Field.product, productId),
            (Field.token, appAccountToken), (Field.state, state.rawValue),
            (Field.createdAt, String(createdAtMilliseconds)),
        ]
        if let paidAtMilliseconds { fields.append((Field.paidAt, String(paidAtMilliseconds))) }
        if let transactionId { fields.append((Field.transaction, transactionId)) }
        if let paidBySide { fields.append((Field.side, paidBySide)) }
        return fields
    }

    /// Reads an order from `HGETALL` of its hash; nil when a required field is missing or invalid.
    package init?(hash: [String: String]) {
        guard let orderNo = hash[Field.orderNo], let userID = hash[Field.user], let productId = hash[Field.product],
            let token = hash[Field.token], let state = hash[Field.state].flatMap(State.init(rawValue:)),
            let created = hash[Field.createdAt].flatMap({ Int64($0) })
        else { return nil }
        self.init(
            orderNo: orderNo, userID: userID, productId: productId, appAccountToken: token, state: state,
            createdAtMilliseconds: created, paidAtMilliseconds: hash[Field.paidAt].flatMap { Int64($0) },
            transactionId: hash[Field.transaction])
        paidBySide = hash[Field.side]
    }

    /// The order hash's field names.
    package enum Field {
        package static let orderNo = "order.no"
        package static let user = "user"
        package static let product = "product"
        /// The appAccountToken, lower-case UUID.
        package static let token = "token"
        /// ``Order/State`` raw value.
        package static let state = "state"
        /// Milliseconds since 1970.
        package static let createdAt = "created.at"
        /// Milliseconds since 1970 (fulfiller).
        package static let paidAt = "paid.at"
        /// Apple `transactionId` that paid it (fulfiller).
        package static let transaction = "transaction"
        /// `sandbox` when the paying transaction is on the user's sandbox side (fulfiller).
        package static let side = "side"
        /// When ingest last signed the promotional offer `offerId` with this order's token (ms): how the ledger
        /// matches Apple's report of the redemption (`offerType` 2) back to a signature.
        package static func offer(_ offerId: String) -> String { "offer:\(offerId)" }
    }

    /// The fields of the `appAccountToken` mapping hash (``Keys/appAccountToken(_:)``).
    package enum TokenField {
        package static let user = "user"
        package static let orderNo = "order.no"
    }
}
