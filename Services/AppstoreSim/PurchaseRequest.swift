import AppStore
import Foundation

/// `POST /sim/purchases`: a customer buys a product.
struct PurchaseRequest: Decodable, Sendable {
    var bundleId: String?
    var productId: String
    /// Apple's product type: `Consumable`, `Non-Consumable`, `Auto-Renewable Subscription`,
    /// `Non-Renewing Subscription` (catalog spellings `consumable`, `nonConsumable`, `autoRenewable`,
    /// `nonRenewing` are accepted too).
    var type: String
    var quantity: Int?
    var appAccountToken: String?
    /// `Production` (default) or `Sandbox`.
    var environment: String?
    /// Auto-renewable subscriptions: the length of a period (default 30 days).
    var expiresInSeconds: Int64?
    /// An earlier receipt of the same customer to add this purchase to.
    var receipt: String?
    var subscriptionGroupIdentifier: String?
    var price: Int64?
    var currency: String?
    /// `PURCHASED` (default) or `FAMILY_SHARED`.
    var inAppOwnershipType: String?
}

extension PurchaseRequest {
    /// The product type, or a 400.
    func productType() throws(SimError) -> ProductType {
        switch type {
        case "Consumable", "consumable": return .consumable
        case "Non-Consumable", "nonConsumable": return .nonConsumable
        case "Auto-Renewable Subscription", "autoRenewable": return .autoRenewableSubscription
        case "Non-Renewing Subscription", "nonRenewing": return .nonRenewingSubscription
        default:
            throw .invalid(
                "type must be Consumable, Non-Consumable, Auto-Renewable Subscription or Non-Renewing Subscription")
        }
    }
}
