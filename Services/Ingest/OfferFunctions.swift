import Foundation
import Ledger
import Pipeline
import Redis

/// The `tollgate_offers_v1` Redis Function library (`Lua/offers.lua`): the per-user limit of a promotional offer and
/// the record of each signature, in one step.
///
/// `offers_v1_sign` — KEYS: the user's signatures of the offer (``Keys/offerSignatures(user:offerId:)``)[, the order
/// hash]. ARGV: nowMs, windowMs, limit (0: none), cap, member (`<orderNo>/<nonce>`), offerId. Drops signatures older
/// than the window; with `limit` left inside it, refuses (`[0, msUntilOneLeaves]`). Without the order key it only
/// checks (`[1]`); with it, records: the member (newest `cap` kept, the key expiring a window after the last
/// signature) and `offer:<offerId>` = nowMs on the order (``Order/Field/offer(_:)``), `[1]`; `[-1]` when the order
/// no longer exists. Both keys carry the user's hash tag: one slot.
enum OfferFunctions {
    static let library = RedisFunctionLibrary(
        "offers", version: 1, functions: ["sign"], parts: [SharedLua.common, PackageResources.offers_lua])

    /// What `sign` decided.
    enum Decision: Sendable, Hashable {
        /// Within the limit (and, with an order, recorded).
        case allowed
        /// The user has had `perUser` signatures of the offer within its window; one leaves it after this long.
        case limitReached(retryAfter: Duration)
        /// The order vanished before the signature was recorded.
        case orderGone
    }

    /// Checks the user's limit of `offer` at `now`, and with `order` records the signature `nonce` made for it.
    static func sign(
        _ offer: PromotionalOffer, user: String, order: Order?, nonce: UUID, now: Int64, keys: Keys,
        on redis: any RedisCommandExecutor
    ) async throws -> Decision {
        var redisKeys = [keys.offerSignatures(user: user, offerId: offer.id)]
        if let order { redisKeys.append(keys.order(user: user, orderNo: order.orderNo)) }
        let member = "\(order?.orderNo ?? "")/\(nonce.uuidString.lowercased())"
        let arguments = [
            String(now), String(offer.effectiveWindow.milliseconds), String(offer.perUser ?? 0),
            String(PromotionalOffer.maximumRecords), member, offer.id,
        ]
        let reply = try await library.call("sign", on: redis, keys: redisKeys, arguments: arguments)
        guard let parts = reply.array, let decided = parts.first?.int else {
            throw PipelineError.unexpectedReply("\(library.function("sign")) returned \(reply)")
        }
        switch decided {
        case 1: return .allowed
        case 0: return .limitReached(retryAfter: .milliseconds(parts.count > 1 ? parts[1].int ?? 1000 : 1000))
        default: return .orderGone
        }
    }
}
