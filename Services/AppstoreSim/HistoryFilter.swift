import AppStore
import Foundation
import Hummingbird

/// The query parameters of Get Transaction History v2.
struct HistoryFilter: Sendable {
    var startDate: Int64?
    var endDate: Int64?
    var productIds: Set<String> = []
    var productTypes: Set<ProductType> = []
    var groups: Set<String> = []
    var revoked: Bool?
    var ownership: InAppOwnershipType?
    var descending = false

    init(_ query: QueryItems) throws(APIErrorBody) {
        if let raw = query["startDate"] {
            guard let value = Int64(raw) else { throw .invalidStartDate }
            startDate = value
        }
        if let raw = query["endDate"] {
            guard let value = Int64(raw) else { throw .invalidEndDate }
            endDate = value
        }
        if let startDate, let endDate, startDate > endDate { throw .startAfterEnd }
        productIds = Set(query[values: "productId"])
        for raw in query[values: "productType"] {
            switch raw {
            case "AUTO_RENEWABLE": productTypes.insert(.autoRenewableSubscription)
            case "NON_RENEWABLE": productTypes.insert(.nonRenewingSubscription)
            case "CONSUMABLE": productTypes.insert(.consumable)
            case "NON_CONSUMABLE": productTypes.insert(.nonConsumable)
            default: throw APIErrorBody(errorCode: 4_000_022, errorMessage: "Invalid product type.", status: .badRequest)
            }
        }
        groups = Set(query[values: "subscriptionGroupIdentifier"])
        switch query["revoked"] {
        case nil: break
        case "true": revoked = true
        case "false": revoked = false
        default: throw APIErrorBody(errorCode: 4_000_030, errorMessage: "Invalid request revoked.", status: .badRequest)
        }
        switch query["inAppOwnershipType"] {
        case nil: break
        case "PURCHASED": ownership = .purchased
        case "FAMILY_SHARED": ownership = .familyShared
        default: throw APIErrorBody(errorCode: 4_000_026, errorMessage: "Invalid in-app ownership type.", status: .badRequest)
        }
        switch query["sort"] {
        case nil, "ASCENDING": descending = false
        case "DESCENDING": descending = true
        default: throw APIErrorBody(errorCode: 4_000_021, errorMessage: "Invalid sort.", status: .badRequest)
        }
    }

    func matches(_ transaction: SimTransaction, ledger: SimLedger) -> Bool {
        if let startDate, transaction.purchaseDate < startDate { return false }
        if let endDate, transaction.purchaseDate >= endDate { return false }
        if !productIds.isEmpty && !productIds.contains(transaction.productId) { return false }
        if !productTypes.isEmpty && !productTypes.contains(transaction.type) { return false }
        if !groups.isEmpty && !groups.contains(transaction.subscriptionGroupIdentifier ?? "") { return false }
        if let revoked, revoked != (transaction.revocationDate != nil) { return false }
        if let ownership, ownership != transaction.inAppOwnershipType { return false }
        return true
    }
}
