import Foundation

/// Optional filters of Get Transaction History (Apple's `TransactionHistoryRequest`), sent as query
/// parameters. The `revision` paging parameter is handled by the client.
public struct TransactionHistoryQuery: Sendable, Hashable {
    /// Apple's `sort`.
    public enum Order: String, Sendable, Hashable {
        case ascending = "ASCENDING"
        case descending = "DESCENDING"
    }

    /// Apple's `productType` query values.
    public enum ProductKind: String, Sendable, Hashable {
        case autoRenewable = "AUTO_RENEWABLE"
        case nonRenewable = "NON_RENEWABLE"
        case consumable = "CONSUMABLE"
        case nonConsumable = "NON_CONSUMABLE"
    }

    public var sort: Order?
    public var productTypes: [ProductKind]
    public var productIds: [String]
    public var startDate: Date?
    public var endDate: Date?
    public var subscriptionGroupIdentifiers: [String]
    public var inAppOwnershipType: InAppOwnershipType?
    public var revoked: Bool?

    public init(
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
