/// One transaction as the ledger recorded it: the hash `tg:{u:<userId>}:tx:<transactionId>`.
///
/// Fields: `tid`, `otid`, `product`, `type` (catalog type or `unknown`), `env` (Apple environment),
/// `qty`, `purchase`, `expires`, `signed` (ms), `state` (`applied`, `refunded`, `unknown_product`),
/// `coins` (credited), `debited` (taken back by the standing refund), `shortfall` (not taken back because
/// of clamping), `refunds` (revocations already applied, `,d<ms>,n<uuid>,`, a prorated one with `p<share>`),
/// `revoked` (ms), `rtype` (Apple's `revocationType` of the standing refund), `rpct` (its share in milli-percent,
/// `100000` for a full refund), `family`
/// (`1` Family Sharing), `ent`, `job` (first job), `created.at`, `updated.at`; for a promotional offer's redemption
/// `offer` (Apple's `offerIdentifier`) and `offer.signed` (`1` matched to a signature of ingest's, `0` not: a fraud
/// signal); `withheld` (`1`: a repeated free trial that grants nothing, ``RepeatFreeTrial``); revenue facts as Apple
/// stated them: `price` (milliunits of `currency`), `currency`, `storefront`, `offer.type`, `offer.id`.
package struct TransactionRecord: Sendable, Hashable, Codable {
    package var transactionId: String
    package var originalTransactionId: String
    package var productId: String
    package var type: String
    package var environment: String
    package var state: String
    package var coins: Int64
    package var debited: Int64
    package var shortfall: Int64
    package var purchaseDate: Int64
    package var expiresDate: Int64?
    package var revocationType: String?
    package var revocationPercentage: Int?
    /// A promotional offer's identifier, and whether the redemption matched a signature (nil: no promotional offer).
    package var offer: String?
    package var offerSigned: Bool?
    /// A repeated free trial, recorded without granting.
    package var withheld: Bool
    package var quantity: Int
    /// When the standing refund was applied (Apple's `revocationDate`).
    package var revokedAt: Int64?
    /// Family Sharing: the purchase is a family member's, shared with this user.
    package var familyShared: Bool
    /// Revenue facts (docs/EVENTS.md): `price` in milliunits of `currency`.
    package var price: Int64?
    package var currency: String?
    package var storefront: String?
    package var offerType: Int?
    package var offerIdentifier: String?

    /// Reads a record from `HGETALL`; nil when it has no `tid` or `state`.
    package init?(hash: [String: String]) {
        guard let tid = hash["tid"], let state = hash["state"] else { return nil }
        transactionId = tid
        originalTransactionId = hash["otid"] ?? tid
        productId = hash["product"] ?? ""
        type = hash["type"] ?? "unknown"
        environment = hash["env"] ?? ""
        self.state = state
        coins = hash["coins"].flatMap { Int64($0) } ?? 0
        debited = hash["debited"].flatMap { Int64($0) } ?? 0
        shortfall = hash["shortfall"].flatMap { Int64($0) } ?? 0
        purchaseDate = hash["purchase"].flatMap { Int64($0) } ?? 0
        expiresDate = hash["expires"].flatMap { Int64($0) }
        revocationType = hash["rtype"]
        revocationPercentage = hash["rpct"].flatMap { Int($0) }
        offer = hash["offer"]
        offerSigned = hash["offer.signed"].map { $0 == "1" }
        withheld = hash["withheld"] == "1"
        quantity = hash["qty"].flatMap { Int($0) } ?? 1
        revokedAt = hash["revoked"].flatMap { Int64($0) }
        familyShared = hash["family"] == "1"
        price = hash["price"].flatMap { Int64($0) }
        currency = hash["currency"]
        storefront = hash["storefront"]
        offerType = hash["offer.type"].flatMap { Int($0) }
        offerIdentifier = hash["offer.id"]
    }
}
