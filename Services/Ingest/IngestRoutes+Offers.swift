import Foundation
import Hummingbird
import Ledger

extension IngestRoutes {
    /// `POST /v1/offers/promotional {productId, offerId, orderNo?}`: Apple's promotional offer signatures for the
    /// calling user, `200 {signatureV2, signature: {keyIdentifier, nonce, timestamp, signature, applicationUsername},
    /// orderNo, appAccountToken}`.
    ///
    /// Only what the catalog lists is signed (`422 unknown_product`, `422 unknown_offer`), with this deployment's
    /// bundle ID and key. The `applicationUsername` is the `appAccountToken` of an order of the caller's for that
    /// product: the pending order named by `orderNo` (one of the caller's own, `404 unknown_order`; of the same
    /// product and unpaid, `409 order_mismatch`), else a new order (under `TOLLGATE_MAX_PENDING_ORDERS`), so that the
    /// purchase is bound to the caller and pays that order. The v2 JWS carries the caller's latest transaction of the
    /// product's entitlement as `transactionId` when the ledger has one. Each request takes a token of the user's
    /// submission bucket (`429 rate_limited`); without an offer key the answer is `501 offers_not_configured`.
    func promotionalOffer(_ request: Request) async throws -> Response {
        let (userID, signer, object, productId) = try await offerRequest(request)
        guard let offerId = object["offerId"] as? String, !offerId.isEmpty else {
            throw IngestError.invalidRequest("offerId must be a non-empty string")
        }
        let orderNo = try Submission.orderNo(object)
        let product = try catalogProduct(productId)
        guard product.listsOffer(offerId) else {
            metrics.reject(reason: "unknown_offer")
            throw IngestError.unknownOffer(offerId, productId: productId)
        }
        try await takeSubmissionToken(userID)
        let order = try await offerOrder(userID: userID, productId: productId, orderNo: orderNo)
        let transactionId = try await latestTransaction(userID: userID, entitlement: product.entitlement)
        let nonce = UUID()
        let now = clock.nowMilliseconds()
        let signatureV2 = try signer.promotionalOfferV2(
            productId: productId, offerId: offerId, transactionId: transactionId, nonce: nonce, issuedAtSeconds: now / 1000)
        let signatureV1 = try signer.promotionalOfferV1(
            productId: productId, offerId: offerId, applicationUsername: order.appAccountToken, nonce: nonce,
            timestampMilliseconds: now)
        logger.info(
            "promotional offer signed",
            metadata: ["order.no": "\(order.orderNo)", "product": "\(productId)", "offer": "\(offerId)"])
        let signature: [String: Any] = [
            "keyIdentifier": signer.keyId, "nonce": nonce.uuidString.lowercased(), "timestamp": now,
            "signature": signatureV1, "applicationUsername": order.appAccountToken.lowercased(),
        ]
        return jsonResponse(
            .ok,
            [
                "signatureV2": signatureV2, "signature": signature, "orderNo": order.orderNo,
                "appAccountToken": order.appAccountToken.lowercased(),
            ])
    }

    /// `POST /v1/offers/introductory {productId}`: Apple's introductory offer eligibility signature for the calling
    /// user, for a product the catalog marks (`introductoryOfferEligibility`; else `422 introductory_offer_not_listed`).
    ///
    /// Apple lets the signed value override its own rule (one introductory offer per Apple ID and subscription
    /// group), both ways. Tollgate only ever takes eligibility away: when the ledger holds a transaction of the
    /// product's entitlement for this user (bought under any Apple ID), it signs `allowIntroductoryOffer: false` with
    /// that transaction's ID, so a second Apple ID does not get a second free trial for the same account,
    /// `200 {productId, allowIntroductoryOffer: false, signature, transactionId}`. When the ledger holds none, it
    /// signs nothing and Apple's own rule decides, `200 {productId, allowIntroductoryOffer: null, signature: null,
    /// reason: "apple_decides"}`: signing `true` would hand a trial to an Apple ID that already had one, which only
    /// Apple knows. Rate limits and keys as for promotional offers.
    func introductoryOffer(_ request: Request) async throws -> Response {
        let (userID, signer, _, productId) = try await offerRequest(request)
        let product = try catalogProduct(productId)
        guard product.signsIntroductoryOfferEligibility else {
            metrics.reject(reason: "introductory_offer_not_listed")
            throw IngestError.introductoryOfferNotListed(productId)
        }
        try await takeSubmissionToken(userID)
        guard let transactionId = try await latestTransaction(userID: userID, entitlement: product.entitlement) else {
            return jsonResponse(
                .ok, ["productId": productId, "allowIntroductoryOffer": NSNull(), "signature": NSNull(), "reason": "apple_decides"])
        }
        let signature = try signer.introductoryOfferEligibility(
            productId: productId, allowIntroductoryOffer: false, transactionId: transactionId, nonce: UUID(),
            issuedAtSeconds: clock.nowMilliseconds() / 1000)
        logger.info("introductory offer eligibility signed", metadata: ["product": "\(productId)", "allow": "false"])
        return jsonResponse(
            .ok,
            ["productId": productId, "allowIntroductoryOffer": false, "signature": signature, "transactionId": transactionId])
    }

    /// What every offer request starts with: the calling user, the offer key (`501 offers_not_configured`), the JSON
    /// body (4 KiB at most) and its `productId`.
    private func offerRequest(
        _ request: Request
    ) async throws -> (userID: String, signer: OfferSigningKey, object: [String: Any], productId: String) {
        let userID = try await authenticator.user(request)
        guard let signer = configuration.offerKey else { throw IngestError.offersNotConfigured() }
        let object = try Submission.jsonObject(try await body(of: request, limit: 4096))
        guard let productId = object["productId"] as? String, !productId.isEmpty else {
            throw IngestError.invalidRequest("productId must be a non-empty string")
        }
        return (userID, signer, object, productId)
    }

    /// The catalog's product, or `422 unknown_product`.
    private func catalogProduct(_ productId: String) throws -> Product {
        guard let product = configuration.catalog.product(productId) else {
            metrics.reject(reason: "unknown_product")
            throw IngestError.unknownProduct(productId)
        }
        return product
    }

    /// The caller's pending order of `productId` named `orderNo`, or a new one when `orderNo` is nil. The order is
    /// read under the caller's own keys, so another user's order number is simply unknown.
    private func offerOrder(userID: String, productId: String, orderNo: String?) async throws -> Order {
        guard let orderNo else { return try await newOrder(userID: userID, productId: productId) }
        let hash = try await redisRead { try await hashStrings(keys.order(user: userID, orderNo: orderNo)) }
        guard let order = Order(hash: hash), order.userID == userID else { throw IngestError.unknownOrder(orderNo) }
        guard order.productId == productId else {
            throw IngestError.orderMismatch("order \(orderNo) is for another product")
        }
        guard order.state == .pending else { throw IngestError.orderMismatch("order \(orderNo) is already paid") }
        return order
    }

    /// The caller's most recently purchased transaction of `entitlement` as the fulfiller recorded it
    /// (`tg:{u:<userId>}:ent:<entitlement>`, transactionId → `active,purchaseMs,expiresMs,upgraded`), or nil.
    private func latestTransaction(userID: String, entitlement: String?) async throws -> String? {
        guard let entitlement else { return nil }
        let hash = try await redisRead { try await hashStrings(keys.entitlement(user: userID, name: entitlement)) }
        var latest: (id: String, purchase: Int64)?
        for (transactionId, value) in hash {
            let fields = value.split(separator: ",", omittingEmptySubsequences: false)
            let purchase = fields.count > 1 ? Int64(fields[1]) ?? 0 : 0
            if latest.map({ purchase > $0.purchase || (purchase == $0.purchase && transactionId > $0.id) }) ?? true {
                latest = (transactionId, purchase)
            }
        }
        return latest?.id
    }
}
