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
    /// The promotional offers (App Store Connect offer identifiers, each with its rule) Tollgate may sign for this
    /// auto-renewable subscription (`POST /v1/offers/promotional`); an offer not listed here is never signed.
    package var offers: [PromotionalOffer]?
    /// Whether Tollgate signs introductory offer eligibility for this auto-renewable subscription
    /// (`POST /v1/offers/introductory`).
    package var introductoryOfferEligibility: Bool?
    /// The App Store subscription group of an auto-renewable subscription, as the catalog names it; absent: its
    /// entitlement stands for the group. Offer eligibility and the repeat free trial rule look at the whole group.
    package var subscriptionGroup: String?

    package init(
        productId: String, type: Kind, coins: Int? = nil, entitlement: String? = nil, durationDays: Int? = nil,
        offers: [PromotionalOffer]? = nil, introductoryOfferEligibility: Bool? = nil, subscriptionGroup: String? = nil
    ) {
        self.productId = productId
        self.type = type
        self.coins = coins
        self.entitlement = entitlement
        self.durationDays = durationDays
        self.offers = offers
        self.introductoryOfferEligibility = introductoryOfferEligibility
        self.subscriptionGroup = subscriptionGroup
    }

    /// The promotional offer `offerId` as the catalog lists it for this product, or nil.
    package func offer(_ offerId: String) -> PromotionalOffer? { offers?.first { $0.id == offerId } }

    /// Whether the catalog lists `offerId` as a promotional offer of this product.
    package func listsOffer(_ offerId: String) -> Bool { offer(offerId) != nil }

    /// The subscription group of an auto-renewable subscription (`subscriptionGroup`, else its entitlement); nil for
    /// other products.
    package var group: String? {
        guard type == .autoRenewable else { return nil }
        return subscriptionGroup ?? entitlement
    }

    /// Whether the catalog marks this product for introductory offer eligibility signatures.
    package var signsIntroductoryOfferEligibility: Bool { introductoryOfferEligibility == true }
}
