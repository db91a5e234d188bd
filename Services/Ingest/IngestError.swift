import Core
import Hummingbird
import Redis

/// Every refusal ingest answers with: a stable machine `code`, an HTTP status and a human message, sent as
/// `{"error": {"code": "...", "message": "..."}}`. Rejected requests write nothing to Redis.
struct IngestError: HTTPResponseError, TollgateError, Sendable {
    let status: HTTPResponse.Status
    let code: String
    let message: String
    /// Seconds for a `Retry-After` header (503 answers).
    var retryAfterSeconds: Int?
    /// The user's coin balance, for `insufficient_coins` (a member of the error object).
    var balance: Int64?

    func response(from request: Request, context: some RequestContext) throws -> Response {
        var headers: HTTPFields = [.contentType: "application/json"]
        if let retryAfterSeconds { headers[.retryAfter] = String(retryAfterSeconds) }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The JSON body, `/` written `\/` as `JSONSerialization` wrote it before (clients may compare the bytes).
    var body: [UInt8] {
        var writer = JSONWriter(capacity: 96 + message.utf8.count, escapingSlashes: true)
        writer.beginObject()
        writer.key("error")
        writer.beginObject()
        writer.member("code", code)
        writer.member("message", message)
        if let balance { writer.member("balance", balance) }
        writer.endObject()
        writer.endObject()
        return writer.bytes
    }

    static func invalidJSON(_ message: String = "the body is not a JSON object") -> IngestError {
        IngestError(status: .badRequest, code: "invalid_json", message: message)
    }
    static func invalidRequest(_ message: String) -> IngestError {
        IngestError(status: .badRequest, code: "invalid_request", message: message)
    }
    static func invalidJWS(_ message: String) -> IngestError {
        IngestError(status: .badRequest, code: "invalid_jws", message: message)
    }
    static func unsupportedAlgorithm(_ alg: String) -> IngestError {
        IngestError(
            status: .badRequest, code: "unsupported_algorithm",
            message: "JWS alg must be ES256, not '\(alg.prefix(16))'")
    }
    static func invalidReceipt(_ message: String) -> IngestError {
        IngestError(status: .badRequest, code: "invalid_receipt", message: message)
    }
    static func unknownNotification() -> IngestError {
        IngestError(
            status: .badRequest, code: "unknown_notification",
            message: "neither a V2 notification (signedPayload) nor a V1 notification (notification_type)")
    }
    static func v1NotificationsDisabled() -> IngestError {
        IngestError(
            status: .forbidden, code: "v1_notifications_disabled",
            message: "V1 notifications are not accepted here (TOLLGATE_V1_NOTIFICATIONS is off)")
    }
    static func sharedSecretMismatch() -> IngestError {
        IngestError(
            status: .unauthorized, code: "shared_secret_mismatch",
            message: "the V1 notification's password is not this app's shared secret")
    }
    static func invalidSignature(_ message: String) -> IngestError {
        IngestError(status: .unauthorized, code: "invalid_signature", message: message)
    }
    /// A V2 notification Apple signed that is not a notification of this deployment's app and environments: `403`
    /// with the verifier's code (`wrong_bundle_id`, `wrong_environment`, `sandbox_not_allowed`, `wrong_app_apple_id`),
    /// or `400 not_a_notification` when the signed payload is not a notification at all.
    static func notForThisApp(_ code: String, _ message: String) -> IngestError {
        switch code {
        case "wrong_bundle_id": return IngestError(status: .forbidden, code: "wrong_bundle_id", message: message)
        case "wrong_environment": return IngestError(status: .forbidden, code: "wrong_environment", message: message)
        case "sandbox_not_allowed": return IngestError(status: .forbidden, code: "sandbox_not_allowed", message: message)
        case "wrong_app_apple_id": return IngestError(status: .forbidden, code: "wrong_app_apple_id", message: message)
        default: return IngestError(status: .badRequest, code: "not_a_notification", message: message)
        }
    }
    static func chainCheckDeferred(_ message: String) -> IngestError {
        IngestError(status: .serviceUnavailable, code: "chain_check_deferred", message: message, retryAfterSeconds: 1)
    }
    static func payloadTooLarge(limit: Int) -> IngestError {
        IngestError(status: .contentTooLarge, code: "payload_too_large", message: "the body exceeds \(limit) bytes")
    }
    static func unauthorized(_ message: String = "a valid bearer token or API key is required") -> IngestError {
        IngestError(status: .unauthorized, code: "unauthorized", message: message)
    }
    static func forbidden(_ message: String = "not allowed for this caller") -> IngestError {
        IngestError(status: .forbidden, code: "forbidden", message: message)
    }
    static func missingScope(_ scope: String, key: String) -> IngestError {
        IngestError(status: .forbidden, code: "missing_scope", message: "the key \(key) lacks the scope \(scope)")
    }
    /// `409 insufficient_coins`: a spend larger than the balance, which the error object carries as `balance`.
    static func insufficientCoins(balance: Int64, amount: Int64) -> IngestError {
        var error = IngestError(
            status: .conflict, code: "insufficient_coins",
            message: "the balance \(balance) is below the amount \(amount); nothing was spent")
        error.balance = balance
        return error
    }
    static func idempotencyConflict(
        _ message: String = "this idempotencyKey was used for another amount or reason; nothing was spent"
    ) -> IngestError {
        IngestError(status: .conflict, code: "idempotency_conflict", message: message)
    }
    static func notFound(_ message: String) -> IngestError {
        IngestError(status: .notFound, code: "not_found", message: message)
    }
    static func unknownProduct(_ productId: String) -> IngestError {
        IngestError(
            status: .unprocessableContent, code: "unknown_product",
            message: "product '\(productId.prefix(200))' is not in the catalog")
    }
    static func unknownOffer(_ offerId: String, productId: String) -> IngestError {
        IngestError(
            status: .unprocessableContent, code: "unknown_offer",
            message: "the catalog lists no offer '\(offerId.prefix(64))' for product '\(productId.prefix(200))'")
    }
    static func offerNotEligible(_ offerId: String, eligibility: String, group: String) -> IngestError {
        IngestError(
            status: .forbidden, code: "offer_not_eligible",
            message: "offer '\(offerId.prefix(64))' is for \(eligibility) subscribers of '\(group.prefix(128))' only")
    }
    static func offerLimitReached(_ offerId: String, perUser: Int, retryAfter: Duration) -> IngestError {
        IngestError(
            status: .tooManyRequests, code: "offer_limit_reached",
            message: "this user has had offer '\(offerId.prefix(64))' signed \(perUser) time(s), the most its window allows",
            retryAfterSeconds: seconds(retryAfter))
    }
    static func unknownOrder(_ orderNo: String) -> IngestError {
        IngestError(status: .notFound, code: "unknown_order", message: "this user has no order \(orderNo.prefix(64))")
    }
    static func orderMismatch(_ message: String) -> IngestError {
        IngestError(status: .conflict, code: "order_mismatch", message: message)
    }
    static func introductoryOfferNotListed(_ productId: String) -> IngestError {
        IngestError(
            status: .unprocessableContent, code: "introductory_offer_not_listed",
            message: "the catalog does not mark product '\(productId.prefix(200))' for introductory offer eligibility")
    }

    static func unknownApp(_ bundleId: String) -> IngestError {
        IngestError(
            status: .unprocessableContent, code: "unknown_app",
            message: "'\(bundleId.prefix(155))' is not one of this deployment's apps (TOLLGATE_APPS)")
    }
    static func appRequired() -> IngestError {
        IngestError(
            status: .unprocessableContent, code: "app_required",
            message: "this deployment has several apps: name the app the user runs as bundleId")
    }
    static func offersNotConfigured() -> IngestError {
        IngestError(
            status: .notImplemented, code: "offers_not_configured",
            message:
                "promotional offers are not signed here (no TOLLGATE_OFFER_KEY_ID, TOLLGATE_OFFER_ISSUER_ID, TOLLGATE_OFFER_PRIVATE_KEY_PATH)"
        )
    }
    static func tooManyPendingOrders(retryAfter: Duration) -> IngestError {
        IngestError(
            status: .tooManyRequests, code: "too_many_pending_orders",
            message: "this user has the most unpaid orders allowed; pay or let one expire",
            retryAfterSeconds: seconds(retryAfter))
    }
    static func tooManyInFlight() -> IngestError {
        IngestError(
            status: .tooManyRequests, code: "too_many_in_flight",
            message: "this user has the most unfinished submissions allowed; wait for one to finish",
            retryAfterSeconds: 1)
    }
    static func rateLimited(retryAfter: Duration) -> IngestError {
        IngestError(
            status: .tooManyRequests, code: "rate_limited",
            message: "this user submits faster than allowed", retryAfterSeconds: seconds(retryAfter))
    }
    /// A service key past its rate of job-making calls (``ServiceKeyLimits``).
    static func keyRateLimited(_ key: String, retryAfter: Duration) -> IngestError {
        IngestError(
            status: .tooManyRequests, code: "key_rate_limited",
            message: "the key \(key) asks Apple faster than its rate allows (TOLLGATE_SERVICE_KEY_RATE)",
            retryAfterSeconds: seconds(retryAfter))
    }
    /// A service key holding its most unfinished jobs (``ServiceKeyLimits``).
    static func keyTooManyInFlight(_ key: String, limit: Int) -> IngestError {
        IngestError(
            status: .tooManyRequests, code: "key_too_many_in_flight",
            message: "the key \(key) has \(limit) unfinished calls, the most allowed; wait for one to finish",
            retryAfterSeconds: 1)
    }
    static func tooManyWaiters() -> IngestError {
        IngestError(
            status: .tooManyRequests, code: "too_many_waiters",
            message: "too many requests wait for results; submit without ?wait= and poll GET /v1/jobs/{id}",
            retryAfterSeconds: 1)
    }
    static func requestTimeout() -> IngestError {
        IngestError(status: .requestTimeout, code: "request_timeout", message: "the request body did not arrive in time")
    }
    static func redisUnavailable() -> IngestError {
        IngestError(
            status: .serviceUnavailable, code: "redis_unavailable",
            message: "the job store is unavailable; retry later", retryAfterSeconds: 1)
    }
    static func overloaded(_ message: String) -> IngestError {
        IngestError(status: .serviceUnavailable, code: "overloaded", message: message, retryAfterSeconds: 1)
    }
    /// Whole seconds for `Retry-After`, at least 1.
    static func seconds(_ duration: Duration) -> Int {
        max(1, Int((duration.milliseconds + 999) / 1000))
    }
    static func replicationTimeout() -> IngestError {
        IngestError(
            status: .serviceUnavailable, code: "replication_timeout",
            message: "the write was not acknowledged by enough replicas; retry", retryAfterSeconds: 1)
    }
    // Labelled grants (IngestRoutes+Grants.swift).
    static func invalidUntil(_ message: String) -> IngestError {
        IngestError(status: .badRequest, code: "invalid_until", message: message)
    }
    static func invalidReason() -> IngestError {
        IngestError(
            status: .badRequest, code: "invalid_reason", message: "reason must be a string of 1-200 bytes without NUL (U+0000)")
    }
    static func unknownEntitlement(_ name: String) -> IngestError {
        IngestError(
            status: .unprocessableContent, code: "unknown_entitlement",
            message: "no product of the catalog grants entitlement '\(name.prefix(200))'")
    }
    static func tooManyGrants(held: Int) -> IngestError {
        IngestError(
            status: .conflict, code: "too_many_grants",
            message: "the user holds \(held) grants, the most allowed; revoke one first")
    }
    static func coinGrantsDisabled() -> IngestError {
        IngestError(
            status: .forbidden, code: "coin_grants_disabled",
            message: "coins are not granted here (TOLLGATE_COIN_GRANTS is off)")
    }
}
