/// One product of the catalog: what an Apple `productId` grants.
public struct Product: Sendable, Hashable, Codable {
    /// What kind of App Store product it is.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case consumable
        case autoRenewable
        case nonConsumable
        case nonRenewing
    }

    public var productId: String
    public var type: Kind
    /// Coins credited per unit (consumables).
    public var coins: Int?
    /// The entitlement granted (subscriptions, non-consumables, non-renewing passes).
    public var entitlement: String?
    /// How long a non-renewing pass lasts, in days; passes stack.
    public var durationDays: Int?

    public init(productId: String, type: Kind, coins: Int? = nil, entitlement: String? = nil, durationDays: Int? = nil) {
        self.productId = productId
        self.type = type
        self.coins = coins
        self.entitlement = entitlement
        self.durationDays = durationDays
    }
}
