package import Core
import Foundation

/// The product catalog (`TOLLGATE_CATALOG`, JSON `{"products": [...]}`), validated when loaded so that a
/// bad file stops a service at startup instead of mis-crediting purchases.
package struct Catalog: Sendable, Hashable, Codable {
    package private(set) var products: [Product]
    private var byID: [String: Product]
    /// Each subscription group's entitlements (``Product/group``), sorted.
    private var groups: [String: [String]]

    /// A catalog with no products (ingest started without `TOLLGATE_CATALOG`).
    package static let empty = Catalog(checked: [], byID: [:])

    private init(checked products: [Product], byID: [String: Product]) {
        self.products = products
        self.byID = byID
        var groups: [String: Set<String>] = [:]
        for product in products {
            if let group = product.group, let entitlement = product.entitlement { groups[group, default: []].insert(entitlement) }
        }
        self.groups = groups.mapValues { $0.sorted() }
    }

    /// Builds a catalog, checking every product: known type, no duplicate id, consumables with positive
    /// coins, the others with an entitlement, non-renewing passes with a positive `durationDays`, promotional
    /// `offers` only on auto-renewable subscriptions, each a distinct identifier of 1–64 letters, digits, `.`, `_`
    /// or `-` with a `perUser` of 1–100 and a `window` of 1 hour to 366 days (``PromotionalOffer``);
    /// `introductoryOfferEligibility`, `subscriptionGroup` (1–128 characters) and `period` (``Product/periods``) only on
    /// auto-renewable subscriptions.
    package init(products: [Product]) throws(LedgerError) {
        var byID: [String: Product] = [:]
        for (index, product) in products.enumerated() {
            let at = "products[\(index)] (\(product.productId))"
            guard !product.productId.isEmpty else { throw .invalidCatalog("products[\(index)]: empty productId") }
            guard byID[product.productId] == nil else { throw .invalidCatalog("\(at): duplicate productId") }
            switch product.type {
            case .consumable:
                guard let coins = product.coins else { throw .invalidCatalog("\(at): a consumable needs coins") }
                guard coins > 0 else { throw .invalidCatalog("\(at): coins must be positive, not \(coins)") }
            case .autoRenewable, .nonConsumable, .nonRenewing:
                guard let entitlement = product.entitlement, !entitlement.isEmpty else {
                    throw .invalidCatalog("\(at): a \(product.type.rawValue) product needs an entitlement")
                }
                if let coins = product.coins, coins < 0 { throw .invalidCatalog("\(at): coins must not be negative") }
            }
            if product.type == .nonRenewing {
                guard let days = product.durationDays, days > 0 else {
                    throw .invalidCatalog("\(at): a nonRenewing product needs a positive durationDays")
                }
            }
            if let offers = product.offers {
                guard product.type == .autoRenewable else {
                    throw .invalidCatalog("\(at): only autoRenewable products have promotional offers")
                }
                guard Set(offers.map(\.id)).count == offers.count else { throw .invalidCatalog("\(at): duplicate offer") }
                for offer in offers { try Self.check(offer, at: at) }
            }
            if let period = product.period {
                guard product.type == .autoRenewable else {
                    throw .invalidCatalog("\(at): only autoRenewable products have a period")
                }
                guard Product.periods.contains(period) else {
                    throw .invalidCatalog("\(at): period must be one of \(Product.periods.sorted().joined(separator: ", "))")
                }
            }
            if product.introductoryOfferEligibility == true, product.type != .autoRenewable {
                throw .invalidCatalog("\(at): only autoRenewable products have introductory offers")
            }
            if let group = product.subscriptionGroup {
                guard product.type == .autoRenewable else {
                    throw .invalidCatalog("\(at): only autoRenewable products have a subscriptionGroup")
                }
                guard (1...128).contains(group.utf8.count) else {
                    throw .invalidCatalog("\(at): subscriptionGroup must be 1-128 characters")
                }
            }
            byID[product.productId] = product
        }
        self.init(checked: products, byID: byID)
    }

    /// Parses and validates catalog JSON. Unknown product types are an error naming the product.
    package init(json: [UInt8]) throws(LedgerError) {
        struct RawProduct: Decodable {
            var productId: String
            var type: String
            var coins: Int?
            var entitlement: String?
            var durationDays: Int?
            var offers: [PromotionalOffer]?
            var introductoryOfferEligibility: Bool?
            var subscriptionGroup: String?
            var period: String?
            var commission: String?
        }
        struct RawCatalog: Decodable { var products: [RawProduct] }
        let raw: RawCatalog
        do {
            raw = try JSONDecoder().decode(RawCatalog.self, from: Data(json))
        } catch {
            throw .invalidCatalog("not a catalog JSON object with a products array: \(error)")
        }
        var products: [Product] = []
        for (index, item) in raw.products.enumerated() {
            guard let kind = Product.Kind(rawValue: item.type) else {
                let known = Product.Kind.allCases.map(\.rawValue).joined(separator: ", ")
                throw .invalidCatalog("products[\(index)] (\(item.productId)): unknown type '\(item.type)' (known: \(known))")
            }
            var commission: Product.Commission?
            if let name = item.commission {
                guard let known = Product.Commission(rawValue: name) else {
                    let names = Product.Commission.allCases.map(\.rawValue).joined(separator: ", ")
                    throw .invalidCatalog("products[\(index)] (\(item.productId)): unknown commission '\(name)' (known: \(names))")
                }
                commission = known
            }
            products.append(
                Product(
                    productId: item.productId, type: kind, coins: item.coins,
                    entitlement: item.entitlement, durationDays: item.durationDays, offers: item.offers,
                    introductoryOfferEligibility: item.introductoryOfferEligibility,
                    subscriptionGroup: item.subscriptionGroup, period: item.period, commission: commission))
        }
        try self.init(products: products)
    }

    /// Loads and validates the catalog file at `path`.
    package init(contentsOf path: String) throws(LedgerError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .invalidCatalog("cannot read \(path)")
        }
        try self.init(json: Array(data))
    }

    /// The catalog of `TOLLGATE_CATALOG` (a path), which a service cannot run without.
    package static func configured(_ reader: EnvironmentReader) throws(ConfigurationError) -> Catalog {
        try load(try reader.required(variable, "the path of the catalog JSON"))
    }

    /// The catalog of `TOLLGATE_CATALOG`, or nil when it is unset.
    package static func configuredIfAny(_ reader: EnvironmentReader) throws(ConfigurationError) -> Catalog? {
        guard let path = reader.optional(variable) else { return nil }
        return try load(path)
    }

    private static let variable = "TOLLGATE_CATALOG"

    /// A project's catalog (docs/PROJECTS.md), at the path its entry in `TOLLGATE_APPS` names; a file that cannot be read
    /// or is not a valid catalog is a ``Core/ConfigurationError`` naming `TOLLGATE_APPS` and the project. With projects,
    /// `TOLLGATE_CATALOG` may not be set: each project names its own.
    package static func ofProject(_ project: ProjectID, path: String, _ reader: EnvironmentReader) throws(ConfigurationError) -> Catalog {
        if reader.optional(variable) != nil {
            throw ConfigurationError(
                variable: variable, problem: "cannot be combined with projects in TOLLGATE_APPS: each project names its catalog")
        }
        do {
            return try Catalog(contentsOf: path)
        } catch {
            throw ConfigurationError(variable: "TOLLGATE_APPS", problem: "project \(project)'s catalog is not usable: \(error.message)")
        }
    }

    /// A file that cannot be read or is not a valid catalog is a ``Core/ConfigurationError`` naming the variable.
    private static func load(_ path: String) throws(ConfigurationError) -> Catalog {
        do {
            return try Catalog(contentsOf: path)
        } catch {
            throw ConfigurationError(variable: variable, problem: "is not usable: \(error.message)")
        }
    }

    /// One promotional offer's identifier and rule.
    private static func check(_ offer: PromotionalOffer, at: String) throws(LedgerError) {
        guard isOfferIdentifier(offer.id) else {
            throw .invalidCatalog("\(at): offer '\(offer.id.prefix(80))' is not 1-64 letters, digits, '.', '_' or '-'")
        }
        if let perUser = offer.perUser, !(1...PromotionalOffer.maximumRecords).contains(perUser) {
            throw .invalidCatalog("\(at): offer \(offer.id): perUser must be 1-\(PromotionalOffer.maximumRecords), not \(perUser)")
        }
        if let window = offer.window, !(PromotionalOffer.minimumWindow...PromotionalOffer.maximumWindow).contains(window) {
            throw .invalidCatalog("\(at): offer \(offer.id): window must be 1h to 366d")
        }
    }

    /// An App Store Connect offer identifier as the catalog accepts it.
    private static func isOfferIdentifier(_ offer: String) -> Bool {
        PlainIdentifier.isValid(offer)
    }

    /// The product with this Apple product id, if the catalog has it.
    package func product(_ productId: String) -> Product? { byID[productId] }

    /// Whether a product of the catalog grants this entitlement (what a labelled grant may name, ``LedgerGrants``).
    package func names(entitlement name: String) -> Bool { products.contains { $0.entitlement == name } }

    /// The entitlements of a subscription group's auto-renewable products (``Product/group``), sorted; empty when no
    /// product names it.
    package func entitlements(inGroup group: String) -> [String] { groups[group] ?? [] }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        do {
            try self.init(products: try container.decode([Product].self, forKey: .products))
        } catch let error as LedgerError {
            throw DecodingError.dataCorruptedError(forKey: .products, in: container, debugDescription: error.description)
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(products, forKey: .products)
    }

    private enum CodingKeys: String, CodingKey { case products }
}
