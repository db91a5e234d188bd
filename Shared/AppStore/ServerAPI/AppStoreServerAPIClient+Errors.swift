import Foundation

extension AppStoreServerAPIClient {
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
