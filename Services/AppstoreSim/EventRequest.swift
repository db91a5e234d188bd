import AppStore
import Foundation

/// `POST /sim/events`: something happens to a purchase, as Apple would report it.
struct EventRequest: Decodable, Sendable {
    /// A V2 notification type: `DID_RENEW`, `REFUND`, `REFUND_REVERSED`, `REVOKE`, `EXPIRED`,
    /// `DID_FAIL_TO_RENEW`, `GRACE_PERIOD_EXPIRED`, `DID_CHANGE_RENEWAL_STATUS`, `DID_CHANGE_RENEWAL_PREF`,
    /// `CONSUMPTION_REQUEST`, `REFUND_DECLINED`, `SUBSCRIBED`, `PRICE_INCREASE`, `RENEWAL_EXTENDED`,
    /// `OFFER_REDEEMED`.
    var type: String
    var subtype: String?
    var transactionId: String
    /// `DID_RENEW`, `SUBSCRIBED`: the length of the new period (default: the subscription's period).
    var expiresInSeconds: Int64?
    /// `REFUND`: Apple's `revocationReason` (`0` other, `1` app issue; default 0).
    var revocationReason: Int?
    /// `REFUND`: a share below `100000` (milli-percent) makes it a `REFUND_PRORATED` refund of that share
    /// (default: `REFUND_FULL`, `100000`).
    var revocationPercentage: Int?
    /// `CONSUMPTION_REQUEST`: Apple's `consumptionRequestReason` (default `UNINTENDED_PURCHASE`).
    var reason: String?
    /// `DID_CHANGE_RENEWAL_PREF`: the product the subscription will renew to.
    var productId: String?
    /// `DID_FAIL_TO_RENEW` with `GRACE_PERIOD`: length of the grace period (default 16 days).
    var gracePeriodSeconds: Int64?
    /// `RENEWAL_EXTENDED`: days added to the current period (default 7).
    var extendByDays: Int?
    /// `false`: the state changes but Apple sends and records no notification (not in Notification History
    /// either) — a renewal Tollgate can only learn about by asking (default `true`).
    var notify: Bool?
}
