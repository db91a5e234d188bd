package import Foundation

/// Optional filters of Get Transaction History (Apple's `TransactionHistoryRequest`), sent as query
/// parameters. The `revision` paging parameter is handled by the client.
package struct TransactionHistoryQuery: Sendable, Hashable {
    /// Apple's `sort`.
    package enum Order: String, Sendable, Hashable {
        case ascending = "ASCENDING"
        case descending = "DESCENDING"
    }

    /// Apple's `productType` query values.
    package enum ProductKind: String, Sendable, Hashable {
        case autoRenewable = "AUTO_RENEWABLE"
        case nonRenewable = "NON_RENEWABLE"
        case consumable = "CONSUMABLE"
        case nonConsumable = "NON_CONSUMABLE"
    }

    package var sort: Order?
    package var productTypes: [ProductKind]
    package var productIds: [String]
    package var startDate: Date?
    package var endDate: Date?
    package var subscriptionGroupIdentifiers: [String]
    package var inAppOwnershipType: InAppOwnershipType?
    package var revoked: Bool?

    package init(
        sort: Order? = nil, productTypes: [ProductKind] = [], productIds: [String] = [], startDate: Date? = nil,
        endDate: Date? = nil, subscriptionGroupIdentifiers: [String] = [], inAppOwnershipType: InAppOwnershipType? = nil,
        revoked: Bool? = nil
    ) {
        self.sort = sort
        self.productTypes = productTypes
        self.productIds = productIds
        self.startDate = startDate
        self.endDate = endDate
        self.subscriptionGroupIdentifiers = subscriptionGroupIdentifiers
        self.inAppOwnershipType = inAppOwnershipType
        self.revoked = revoked
    }

    /// The query items, in a stable order.
    var queryItems: [URLQueryItem] {
        var items: [URLQueryItem] = []
        if let startDate { items.append(URLQueryItem(name: "startDate", value: String(Self.millis(startDate)))) }
        if let endDate { items.append(URLQueryItem(name: "endDate", value: String(Self.millis(endDate)))) }
        items += productIds.map { URLQueryItem(name: "productId", value: $0) }
        items += productTypes.map { URLQueryItem(name: "productType", value: $0.rawValue) }
        if let sort { items.append(URLQueryItem(name: "sort", value: sort.rawValue)) }
        items += subscriptionGroupIdentifiers.map { URLQueryItem(name: "subscriptionGroupIdentifier", value: $0) }
        if let inAppOwnershipType { items.append(URLQueryItem(name: "inAppOwnershipType", value: inAppOwnershipType.rawValue)) }
        if let revoked { items.append(URLQueryItem(name: "revoked", value: revoked ? "true" : "false")) }
        return items
    }

    static func millis(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
