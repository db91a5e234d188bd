/// The plan's JSON, as the ledger's Lua reads it (`ledger_transactions.lua` validates every field before the entry's
/// acknowledgement): written by ``LedgerPlan/body`` through `LedgerPlan+JSON.swift`, built in `LedgerPlan.swift`.
extension LedgerPlan {
    struct Tx: Encodable {
        var tid, otid, product, type: String
        var coins: Int
        var qty: Int
        var ent: Int?
        var purchase: Int64
        var expires, revoked, signed: Int64?
        var family, upgraded: Bool
        var aat: String?
        var rec: Int
        /// The transaction's owner index in the owner's partition (``Keys/transactionOwner(partition:transactionId:)``),
        /// written with the record: `GET /v1/transactions/{id}` finds the record through it.
        var txo: Int?
        /// The binding and parked keys when the chain lives in this call's slot; else `owner` is what its claim
        /// returned (nil: not claimed yet, so the function refuses to credit it and asks for a claim).
        var bind, park: Int?
        var owner: String?
        /// The token mapping's key in this call's slot (one partition); else what it held when read (`towner`,
        /// `torder`), which is written once.
        var aatKey: Int?
        var towner, torder: String?
        /// Apple's `revocationType` and `revocationPercentage` (milli-percent, only when 0–100000: anything else
        /// is no stated share, so the revocation takes back everything).
        var rtype: String?
        var rpct: Int?
        /// A promotional offer's redemption (`offerType` 2): Apple's `offerIdentifier` (empty when Apple named none),
        /// and `osig`, the owner's order its token maps to, whose `offer:<id>` field records ingest's signature.
        var offer: String?
        var osig: Int?
        /// An auto-renewable's subscription group; `intro` for the user's own introductory offer period (not Family
        /// Sharing), `trial` when that period is a free trial.
        var group: String?
        var intro, trial: Bool?
        /// Revenue facts for the record and the outbound event (docs/EVENTS.md): Apple's `price` (milliunits of
        /// `cur`), `storefront`, `offerType` and `offerIdentifier` (`oid`), when Apple stated them.
        var price: Int64?
        var cur, sf: String?
        var otype: Int?
        var oid: String?
    }
    struct Ent: Encodable {
        var name, type: String
        var days: Int
        var key: Int
    }
    struct Renewal: Encodable {
        var ent: Int
        var otid: String
        /// The binding key of `otid`: the renewal is written only when the chain is bound to the plan's user. In
        /// another partition's slot: `bound`, whether it was bound to the user when read.
        var bind: Int?
        var bound: Bool?
        var auto: Int?
        var retry: Bool
        var grace, signed: Int64?
        /// Apple's `autoRenewProductId`, `expirationIntent` and `eligibleWinBackOfferIds` (comma-joined, only ids of
        /// 1–64 letters, digits, `.`, `-`, `_`, at most 20), for the customer API (issue 31).
        var aprod: String?
        var intent: Int?
        var winback: String?
    }
    struct Note: Encodable {
        var type: String
        var uuid: String?
        var signed: Int64?
        /// Whether the type is Apple's signed word (V2): a V1 body's type proves nothing.
        var evidence: Bool
    }
    struct Body: Encodable {
        var jobId, kind, user, env, channel: String
        var now, verifiedAt: Int64
        var retention: Int
        var clamp: Bool
        var by: String
        var byKey: Int?
        /// A client's submission: only a claim may be refused because of an order.
        var claim: Bool
        /// The order is the one the client named (`orderNo`), not one found through a token.
        var explicit = false
        /// A part of another entry's event handed to this owner: it never writes the job's status.
        var forwarded: Bool
        var hops: Int
        /// Parked events the claims of this event's chains in other partitions already moved back (reported with
        /// the ones this call unparks).
        var unparked = 0
        var order: Int?
        var orderNo: String?
        /// The owner's index of unpaid orders, from which a paid order is removed.
        var pending: Int?
        var note: Note?
        /// The sweep index keys (zset, ref hash) when the plan has an auto-renewable entitlement.
        var due: Int?
        var dueRef: Int?
        var txs: [Tx] = []
        var ents: [Ent] = []
        var renewals: [Renewal] = []
        /// `refuse` when a second free trial grants nothing until its first paid period (``RepeatFreeTrial``).
        var trials: String?
        /// Apple's signed JWS for the outbound events (`TOLLGATE_EVENTS_INCLUDE_APPLE`; at most 64 KB).
        var apple: String?
        /// The user's own event log and its bounds (``UserEventLog``).
        var ulog: Int?
        var ulogCap: Int?
        var ulogTtl: Int?
        /// `sandbox` when the plan applies on the user's sandbox side (``LedgerSide``): its keys are that side's, and
        /// its events say so and count their own sequence.
        var side: String?
        /// The project's id outside the default project (docs/PROJECTS.md): its events carry it.
        var project: String?
    }
}
