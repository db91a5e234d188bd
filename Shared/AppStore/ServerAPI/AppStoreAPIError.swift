import Core

/// A failed App Store Server API call: a stable ``Code``, whether trying again later may succeed, the
/// delay Apple asked for, and Apple's own `errorCode`/`errorMessage` when the body carried them.
package struct AppStoreAPIError: TollgateError, Sendable, Hashable {
    /// Stable machine codes.
    package struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        package var rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }
        package var description: String { rawValue }

        /// HTTP 429: too many requests; see ``AppStoreAPIError/retryAfter``. Retryable.
        package static let rateLimited = Code(rawValue: "api_rate_limited")
        /// HTTP 5xx (with ``AppStoreAPIError/retryAfter`` when Apple sent `Retry-After`). Retryable.
        package static let unavailable = Code(rawValue: "api_unavailable")
        /// No answer within the timeout. Retryable.
        package static let timeout = Code(rawValue: "api_timeout")
        /// No connection could be made. Retryable.
        package static let unreachable = Code(rawValue: "api_unreachable")
        /// An answer that is not what the endpoint documents. Retryable.
        package static let badResponse = Code(rawValue: "api_bad_response")
        /// HTTP 401: the JWT was refused (wrong key, issuer, bundle ID or clock). Permanent until fixed.
        package static let unauthorized = Code(rawValue: "api_unauthorized")
        /// HTTP 404: the transaction, order or token does not exist. Permanent.
        package static let notFound = Code(rawValue: "api_not_found")
        /// A 4xx carrying one of Apple's retryable error codes (4040002, 4040004, 4040006, 5000001: "not found, but
        /// try again"). Retryable.
        package static let retryLater = Code(rawValue: "api_retry_later")
        /// Any other 4xx: Apple refused the request; see ``AppStoreAPIError/appleErrorCode``. Permanent.
        package static let requestRejected = Code(rawValue: "api_request_rejected")
        /// HTTP 400, Apple error 4000183 (`InvalidAppAccountTokenUUIDError`): the app account token is not a UUID.
        /// Permanent.
        package static let invalidAppAccountToken = Code(rawValue: "api_invalid_app_account_token")
        /// HTTP 400, Apple error 4000185 (`FamilyTransactionNotSupportedError`): the purchase came through Family
        /// Sharing, which the endpoint does not take. Permanent.
        package static let familyTransactionNotSupported = Code(rawValue: "api_family_transaction_not_supported")
        /// HTTP 400, Apple error 4000187 (`TransactionIdNotOriginalTransactionIdError`): the endpoint wants an original
        /// transaction ID. Permanent.
        package static let notOriginalTransactionId = Code(rawValue: "api_not_original_transaction_id")
        /// The client's configuration (key, URLs) is unusable. Permanent.
        package static let invalidConfiguration = Code(rawValue: "api_invalid_configuration")
        /// The arguments of a call are invalid (empty ID, bad date range). Permanent.
        package static let invalidRequest = Code(rawValue: "api_invalid_request")
    }

    package var code: Code
    package var message: String
    package var isRetryable: Bool
    /// The delay asked for by `Retry-After` (HTTP 429).
    package var retryAfter: Duration?
    /// The HTTP status, when Apple answered.
    package var httpStatus: Int?
    /// Apple's `errorCode` from the error body, e.g. `4040010` (transaction ID not found).
    package var appleErrorCode: Int?
    /// Apple's `errorMessage` from the error body.
    package var appleErrorMessage: String?

    package init(
        _ code: Code, _ message: String, isRetryable: Bool, retryAfter: Duration? = nil, httpStatus: Int? = nil,
        appleErrorCode: Int? = nil, appleErrorMessage: String? = nil
    ) {
        self.code = code
        self.message = message
        self.isRetryable = isRetryable
        self.retryAfter = retryAfter
        self.httpStatus = httpStatus
        self.appleErrorCode = appleErrorCode
        self.appleErrorMessage = appleErrorMessage
    }

}
