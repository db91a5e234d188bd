import Foundation
import HTTPClient

extension AppStoreServerAPIClient {
    /// Apple's "Errors to retry": `AccountNotFoundRetryableError` (4040002), `AppNotFoundRetryableError` (4040004),
    /// `OriginalTransactionIdNotFoundRetryableError` (4040006) and `GeneralInternalRetryableError` (5000001). Each
    /// means "resend the same request later", whatever HTTP status carries it. (4040008,
    /// `TestNotificationNotFoundError`, is not one: the test notification's token expired.)
    package static let retryableAppleErrorCodes: Set<Int> = [4_040_002, 4_040_004, 4_040_006, 5_000_001]

    /// Apple's error codes that have a stable code of their own (any other 4xx is `api_request_rejected`, a 404
    /// `api_not_found`): `InvalidAppAccountTokenUUIDError` (4000183), `FamilyTransactionNotSupportedError` (4000185),
    /// `TransactionIdNotOriginalTransactionIdError` (4000187). None is retryable.
    package static let namedAppleErrorCodes: [Int: AppStoreAPIError.Code] = [
        4_000_183: .invalidAppAccountToken, 4_000_185: .familyTransactionNotSupported, 4_000_187: .notOriginalTransactionId,
    ]

    static func transportFailure(
        _ error: HTTPTransportError, method: HTTPTransportRequest.Method, path: String
    ) -> AppStoreAPIError {
        let call = "\(method.rawValue) \(path)"
        switch error.code {
        case .timeout:
            return AppStoreAPIError(.timeout, "\(call) timed out: \(error.message)", isRetryable: true)
        case .connectionFailed, .tlsFailed:
            return AppStoreAPIError(.unreachable, "\(call) could not connect: \(error.message)", isRetryable: true)
        case .invalidResponse, .failed:
            return AppStoreAPIError(.badResponse, "\(call) failed: \(error.message)", isRetryable: true)
        }
    }

    static func httpFailure(
        _ response: HTTPTransportResponse, method: HTTPTransportRequest.Method, path: String, now: Date
    ) -> AppStoreAPIError {
        let payload = try? JSONDecoder().decode(APIErrorPayload.self, from: response.body)
        let status = response.status
        var message = "\(method.rawValue) \(path) answered HTTP \(status)"
        if let code = payload?.errorCode { message += ", Apple error \(code)" }
        if let text = payload?.errorMessage { message += ": \(text)" }
        func error(_ code: AppStoreAPIError.Code, retryable: Bool, retryAfter: Duration? = nil) -> AppStoreAPIError {
            AppStoreAPIError(
                code, message, isRetryable: retryable, retryAfter: retryAfter, httpStatus: status,
                appleErrorCode: payload?.errorCode, appleErrorMessage: payload?.errorMessage)
        }
        if let code = payload?.errorCode, retryableAppleErrorCodes.contains(code), status != 429 {
            let retryAfter = response.retryAfter(now: now)
            return error((500...599).contains(status) ? .unavailable : .retryLater, retryable: true, retryAfter: retryAfter)
        }
        if let code = payload?.errorCode, let named = namedAppleErrorCodes[code], ![401, 429].contains(status),
            (400...499).contains(status)
        {
            return error(named, retryable: false)
        }
        switch status {
        case 429: return error(.rateLimited, retryable: true, retryAfter: response.retryAfter(now: now))
        case 401: return error(.unauthorized, retryable: false)
        case 404: return error(.notFound, retryable: false)
        case 400...499: return error(.requestRejected, retryable: false)
        case 500...599: return error(.unavailable, retryable: true, retryAfter: response.retryAfter(now: now))
        default: return error(.badResponse, retryable: true)
        }
    }
}
