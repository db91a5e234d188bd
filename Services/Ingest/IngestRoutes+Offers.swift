import AppStore
import Core
import Foundation
import Hummingbird
import Ledger
import Logging
import Pipeline

extension IngestRoutes {
    /// `POST /v1/offers/promotional {productId, offerId, orderNo?, bundleId?}`: Apple's promotional offer signatures for the
    /// calling user, `200 {signatureV2, signature: {keyIdentifier, nonce, timestamp, signature, applicationUsername},
    /// orderNo, appAccountToken}`.
    ///
    /// Only what the catalog lists is signed (`422 unknown_product`, `422 unknown_offer`), with this deployment's
    /// bundle ID and key, and only under the offer's rule (``PromotionalOffer``): its `eligibility` by the ledger's
    /// state of the product's subscription group (`403 offer_not_eligible`) and its `perUser` limit within its
    /// `window` (`429 offer_limit_reached` with `Retry-After`). The `applicationUsername` is the `appAccountToken` of an
    /// order of the caller's for that product: the pending order named by `orderNo` (one of the caller's own,
    /// `404 unknown_order`; of the same product and unpaid, `409 order_mismatch`), else a new order (under
    /// `TOLLGATE_MAX_PENDING_ORDERS`), so that the purchase is bound to the caller and pays that order. Every signature
    /// is recorded before it is returned (``OfferFunctions``): in the user's signatures of the offer, and on the order,
    /// where the ledger matches Apple's report of the redemption. The v2 JWS carries the caller's latest transaction
    /// of the product's subscription group as `transactionId` when the ledger has one. Each request takes a token of
    /// the user's submission bucket (`429 rate_limited`); without an offer key the answer is `501 offers_not_configured`.
    func promotionalOffer(_ request: Request) async throws -> Response {
        let user = try await authenticator.user(request)
        return try await scoped(to: user.project).promotionalOffer(request, userID: user.id)
    }

    /// A promotional offer for `userID`, in this copy's ``project`` (its catalog, its ledger).
    private func promotionalOffer(_ request: Request, userID: String) async throws -> Response {
        let (signer, object, productId) = try await offerRequest(request)
        guard case .string(let offerId)? = object.members["offerId"], !offerId.isEmpty else {
            throw IngestError.invalidRequest("offerId must be a non-empty string")
        }
        let orderNo = try Submission.orderNo(object)
        let product = try catalogProduct(productId)
        guard let offer = product.offer(offerId) else {
            metrics.reject(reason: "unknown_offer")
            throw IngestError.unknownOffer(offerId, productId: productId)
        }
        try await takeSubmissionToken(userID)
        let entitlements = product.group.map(catalog.entitlements(inGroup:)) ?? []
        // The sandbox side counts for a tester only (issue 42): Apple's offer signature names no environment, so one
        // given on free TestFlight history would redeem in the App Store build.
        let sides: [LedgerSide] = try await sandboxCounts(for: userID) ? LedgerSide.allCases : [.primary]
        try await checkEligibility(
            offer, userID: userID, group: product.group ?? productId, entitlements: entitlements, sides: sides)
        let nonce = UUID()
        try await checkLimit(offer, userID: userID, order: nil, nonce: nonce)
        let order = try await offerOrder(userID: userID, productId: productId, orderNo: orderNo)
        try await checkLimit(offer, userID: userID, order: order, nonce: nonce)
        let transactionId = try await latestTransaction(userID: userID, entitlements: entitlements, sides: sides)
        let now = clock.nowMilliseconds()
        let signatureV2 = try signer.promotionalOfferV2(
            productId: productId, offerId: offerId, transactionId: transactionId, nonce: nonce, issuedAtSeconds: now / 1000)
        let signatureV1 = try signer.promotionalOfferV1(
            productId: productId, offerId: offerId, applicationUsername: order.appAccountToken, nonce: nonce,
            timestampMilliseconds: now)
        logger.info(
            "promotional offer signed",
            metadata: ["order.no": "\(order.orderNo)", "product": "\(productId)", "offer": "\(offerId)"])
        return jsonResponse(.ok) { answer in
            answer.member("appAccountToken", order.appAccountToken.lowercased())
            answer.member("orderNo", order.orderNo)
            answer.key("signature")
            answer.beginObject()
            answer.member("applicationUsername", order.appAccountToken.lowercased())
            answer.member("keyIdentifier", signer.keyId)
            answer.member("nonce", nonce.uuidString.lowercased())
            answer.member("signature", signatureV1)
            answer.member("timestamp", now)
            answer.endObject()
            answer.member("signatureV2", signatureV2)
        }
    }

    /// Refuses (`403 offer_not_eligible`) a caller the offer's `eligibility` does not cover, by the states of the
    /// group's entitlements in the caller's account (``EntitlementsView``, an `active` one past its `expires` counting
    /// as expired): `active` needs one `active` or in its grace period; `lapsed` needs none of those and one `expired`
    /// or in billing retry (a refunded, `revoked` subscription is not lapsed, nor is a user who never subscribed).
    /// `sides`: the primary side alone, or both for a tester (an App Reviewer's subscription is on the sandbox side).
    private func checkEligibility(
        _ offer: PromotionalOffer, userID: String, group: String, entitlements: [String], sides: [LedgerSide]
    ) async throws {
        guard offer.eligibility != .any else { return }
        // Apple's states of the counted sides, grants not counted.
        let now = clock.nowMilliseconds()
        let hash = try await redisRead { try await hashStrings(keys.account(user: userID)) }
        var sandbox: [String: String] = [:]
        if sides.contains(.sandbox) {
            sandbox = try await redisRead { try await hashStrings(keys.on(.sandbox).account(user: userID)) }
        }
        let states = EntitlementsView(hash: hash, nowMilliseconds: now).adding(sandbox: sandbox, nowMilliseconds: now).entitlements
            .filter { entitlements.contains($0.entitlement) }.map(\.state)
        let active = states.contains { $0 == "active" || $0 == "gracePeriod" }
        let lapsed = !active && states.contains { $0 == "expired" || $0 == "billingRetry" }
        guard offer.eligibility == .active ? active : lapsed else {
            metrics.reject(reason: "offer_not_eligible")
            throw IngestError.offerNotEligible(offer.id, eligibility: offer.eligibility.rawValue, group: group)
        }
    }

    /// The offer's per-user limit (`429 offer_limit_reached`); with `order`, also records the signature. Checked once
    /// before an order is made (so that a refused request makes none) and again, atomically with the record, after.
    private func checkLimit(_ offer: PromotionalOffer, userID: String, order: Order?, nonce: UUID) async throws {
        let decision = try await redisRead {
            try await OfferFunctions.sign(
                offer, user: userID, order: order, nonce: nonce, now: clock.nowMilliseconds(), keys: keys, on: redis)
        }
        switch decision {
        case .allowed:
            return
        case .limitReached(let retryAfter):
            metrics.reject(reason: "offer_limit_reached")
            throw IngestError.offerLimitReached(offer.id, perUser: offer.perUser ?? 0, retryAfter: retryAfter)
        case .orderGone:
            throw IngestError.unknownOrder(order?.orderNo ?? "")
        }
    }

    /// `POST /v1/offers/introductory {productId}`: Apple's introductory offer eligibility signature for the calling
    /// user, for a product the catalog marks (`introductoryOfferEligibility`; else `422 introductory_offer_not_listed`).
    ///
    /// Apple lets the signed value override its own rule (one introductory offer per Apple ID and subscription
    /// group), both ways. Tollgate only ever takes eligibility away: when the ledger holds a transaction of the
    /// product's subscription group for this user (bought under any Apple ID), it signs `allowIntroductoryOffer:
    /// false` with that transaction's ID, so a second Apple ID does not get a second free trial for the same account,
    /// `200 {productId, allowIntroductoryOffer: false, signature, transactionId}`. When the ledger holds none, it
    /// signs nothing and Apple's own rule decides, `200 {productId, allowIntroductoryOffer: null, signature: null,
    /// reason: "apple_decides"}`: signing `true` would hand a trial to an Apple ID that already had one, which only
    /// Apple knows. Rate limits and keys as for promotional offers.
    func introductoryOffer(_ request: Request) async throws -> Response {
        let user = try await authenticator.user(request)
        return try await scoped(to: user.project).introductoryOffer(request, userID: user.id)
    }

    /// An introductory offer eligibility for `userID`, in this copy's ``project``.
    private func introductoryOffer(_ request: Request, userID: String) async throws -> Response {
        let (signer, _, productId) = try await offerRequest(request)
        let product = try catalogProduct(productId)
        guard product.signsIntroductoryOfferEligibility else {
            metrics.reject(reason: "introductory_offer_not_listed")
            throw IngestError.introductoryOfferNotListed(productId)
        }
        try await takeSubmissionToken(userID)
        let entitlements = product.group.map(catalog.entitlements(inGroup:)) ?? []
        let sides: [LedgerSide] = try await sandboxCounts(for: userID) ? LedgerSide.allCases : [.primary]
        guard let transactionId = try await latestTransaction(userID: userID, entitlements: entitlements, sides: sides) else {
            return jsonResponse(.ok) { answer in
                answer.key("allowIntroductoryOffer")
                answer.null()
                answer.member("productId", productId)
                answer.member("reason", "apple_decides")
                answer.key("signature")
                answer.null()
            }
        }
        let signature = try signer.introductoryOfferEligibility(
            productId: productId, allowIntroductoryOffer: false, transactionId: transactionId, nonce: UUID(),
            issuedAtSeconds: clock.nowMilliseconds() / 1000)
        logger.info("introductory offer eligibility signed", metadata: ["product": "\(productId)", "allow": "false"])
        return jsonResponse(.ok) { answer in
            answer.member("allowIntroductoryOffer", false)
            answer.member("productId", productId)
            answer.member("signature", signature)
            answer.member("transactionId", transactionId)
        }
    }

    /// What every offer request starts with: the calling user, the JSON body (4 KiB at most), its `productId`, and the
    /// offer key of the app the user runs (``offerSigner(_:)``).
    private func offerRequest(
        _ request: Request
    ) async throws -> (signer: OfferSigningKey, object: JSONFields, productId: String) {
        guard configuration.offerKey != nil || !configuration.additionalOfferKeys.isEmpty else {
            throw IngestError.offersNotConfigured()
        }
        let object = try Submission.jsonFields(try await body(of: request, limit: 4096))
        let signer = try offerSigner(object)
        guard case .string(let productId)? = object.members["productId"], !productId.isEmpty else {
            throw IngestError.invalidRequest("productId must be a non-empty string")
        }
        return (signer, object, productId)
    }

    /// The key that signs for the app the user runs: an offer's signature is only good for the bundle ID it names, and
    /// only apps of the user's own project (docs/PROJECTS.md) are the user's to run. With one app in the project, that
    /// app's, whatever the request says (as before there were several: the bundle ID is never the caller's to choose).
    /// With several (`TOLLGATE_APPS`), the request's `bundleId` picks one of the project's apps (`422 unknown_app` for
    /// any other, another project's included: Tollgate never signs for an app the caller does not run; `422
    /// app_required` when absent). An app without an offer key answers `501 offers_not_configured`.
    private func offerSigner(_ object: JSONFields) throws -> OfferSigningKey {
        let apps = configuration.bundleIds(of: project)
        let bundleId: String
        if apps.count == 1 {
            bundleId = apps[0]
        } else {
            guard case .string(let named)? = object.members["bundleId"], !named.isEmpty else {
                if object.members["bundleId"] == nil || object.members["bundleId"] == .null { throw IngestError.appRequired() }
                throw IngestError.invalidRequest("bundleId must be a non-empty string")
            }
            guard apps.contains(named) else {
                metrics.reject(reason: "unknown_app")
                throw IngestError.unknownApp(named)
            }
            bundleId = named
        }
        let signer =
            bundleId == configuration.app.bundleId
            ? configuration.offerKey : configuration.additionalOfferKeys.first { $0.bundleId == bundleId }
        guard let signer else { throw IngestError.offersNotConfigured() }
        return signer
    }

    /// The catalog's product, or `422 unknown_product`.
    private func catalogProduct(_ productId: String) throws -> Product {
        guard let product = catalog.product(productId) else {
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

    /// The caller's most recently purchased transaction of a subscription group (its `entitlements`) as the
    /// fulfiller recorded it (`tg:{u:<userId>}:ent:<entitlement>`, transactionId → `active,purchaseMs,expiresMs,upgraded`),
    /// or nil; of `sides` only (the sandbox side's for a tester alone).
    private func latestTransaction(userID: String, entitlements: [String], sides: [LedgerSide]) async throws -> String? {
        var hash: [String: String] = [:]
        for entitlement in entitlements {
            for side in sides {
                hash.merge(try await redisRead { try await hashStrings(keys.on(side).entitlement(user: userID, name: entitlement)) }) { $1 }
            }
        }
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
