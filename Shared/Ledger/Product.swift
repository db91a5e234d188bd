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
    /// An auto-renewable subscription's billing period, ISO 8601 as App Store Connect sets it (``periods``): the
    /// export's MRR (docs/EXPORT.md). Absent: the subscription counts in no MRR figure.
    package var period: String?
    /// Apple's commission on this product for the export's estimated proceeds (``Commission``); absent: `standard`.
    package var commission: Commission?

    /// The billing periods App Store Connect offers for auto-renewable subscriptions.
    package static let periods: Set<String> = ["P1W", "P1M", "P2M", "P3M", "P6M", "P1Y"]

    /// Apple's commission program for a product (the export's estimated proceeds, docs/EXPORT.md).
    package enum Commission: String, Sendable, Hashable, Codable, CaseIterable {
        /// 30%; 15% on an auto-renewable subscription once its subscriber has a year of paid service.
        case standard
        /// The App Store Small Business Program: 15%.
        case smallBusiness

        /// The commission rate, and the rate after a subscriber's first year (subscriptions).
        package var rates: (first: Double, afterYear: Double) {
            switch self {
            case .standard: (0.30, 0.15)
            case .smallBusiness: (0.15, 0.15)
            }
        }
    }

    package init(
        productId: String, type: Kind, coins: Int? = nil, entitlement: String? = nil, durationDays: Int? = nil,
        offers: [PromotionalOffer]? = nil, introductoryOfferEligibility: Bool? = nil, subscriptionGroup: String? = nil,
        period: String? = nil, commission: Commission? = nil
    ) {
        self.productId = productId
        self.type = type
        self.coins = coins
        self.entitlement = entitlement
        self.durationDays = durationDays
        self.offers = offers
        self.introductoryOfferEligibility = introductoryOfferEligibility
        self.subscriptionGroup = subscriptionGroup
        self.period = period
        self.commission = commission
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
