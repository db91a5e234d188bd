/// One product of the catalog: what an Apple `productId` grants.
package struct Product: Sendable, Hashable, Codable {
    /// What kind of App Store product it is.
    package enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case consumable
        case autoRenewable
        case nonConsumable
        case nonRenewing
    }

    package var productId: String
    package var type: Kind
    /// Coins credited per unit (consumables).
    package var coins: Int?
    /// The entitlement granted (subscriptions, non-consumables, non-renewing passes).
    package var entitlement: String?
    /// How long a non-renewing pass lasts, in days; passes stack.
    package var durationDays: Int?
    /// The promotional offers (App Store Connect offer identifiers) Tollgate may sign for this auto-renewable
    /// subscription (`POST /v1/offers/promotional`); an offer not listed here is never signed.
    package var offers: [String]?
    /// Whether Tollgate signs introductory offer eligibility for this auto-renewable subscription
    /// (`POST /v1/offers/introductory`).
    package var introductoryOfferEligibility: Bool?

    package init(
        productId: String, type: Kind, coins: Int? = nil, entitlement: String? = nil, durationDays: Int? = nil,
        offers: [String]? = nil, introductoryOfferEligibility: Bool? = nil
    ) {
        self.productId = productId
        self.type = type
        self.coins = coins
        self.entitlement = entitlement
        self.durationDays = durationDays
        self.offers = offers
        self.introductoryOfferEligibility = introductoryOfferEligibility
    }

    /// Whether the catalog lists `offerId` as a promotional offer of this product.
    package func listsOffer(_ offerId: String) -> Bool { offers?.contains(offerId) ?? false }

    /// Whether the catalog marks this product for introductory offer eligibility signatures.
    package var signsIntroductoryOfferEligibility: Bool { introductoryOfferEligibility == true }
}
