import Foundation
import Hummingbird

/// An App Store Server API error: Apple's `{"errorCode", "errorMessage"}` and the HTTP status.
struct APIErrorBody: Error, Sendable, Encodable {
    var errorCode: Int
    var errorMessage: String
    var status: HTTPResponse.Status

    enum CodingKeys: String, CodingKey { case errorCode, errorMessage }

    /// Apple answers 401 with no body; the simulator adds a reason to help debugging.
    static func unauthorized(_ reason: String) -> APIErrorBody {
        APIErrorBody(errorCode: 4_010_000, errorMessage: "Unauthorized: \(reason).", status: .unauthorized)
    }

    static let transactionNotFound = APIErrorBody(errorCode: 4_040_010, errorMessage: "Transaction id not found.", status: .notFound)
    static let invalidTransactionId = APIErrorBody(errorCode: 4_000_006, errorMessage: "Invalid transaction id.", status: .badRequest)
    static let invalidRevision = APIErrorBody(errorCode: 4_000_005, errorMessage: "Invalid request revision.", status: .badRequest)
    static let invalidPaginationToken = APIErrorBody(errorCode: 4_000_014, errorMessage: "Invalid pagination token.", status: .badRequest)
    static let invalidStartDate = APIErrorBody(errorCode: 4_000_015, errorMessage: "Invalid start date.", status: .badRequest)
    static let invalidEndDate = APIErrorBody(errorCode: 4_000_016, errorMessage: "Invalid end date.", status: .badRequest)
    static let startAfterEnd = APIErrorBody(errorCode: 4_000_013, errorMessage: "Start date after end date.", status: .badRequest)
    static let startTooFarInPast = APIErrorBody(errorCode: 4_000_012, errorMessage: "Start date too far in past.", status: .badRequest)
    static let badRequest = APIErrorBody(errorCode: 4_000_000, errorMessage: "Bad request.", status: .badRequest)
    static let testNotificationNotFound = APIErrorBody(
        errorCode: 4_040_008, errorMessage: "Test notification not found.", status: .notFound)
    static let invalidTestNotificationToken = APIErrorBody(
        errorCode: 4_000_020, errorMessage: "Invalid test notification token.", status: .badRequest)
    static let serverNotificationURLNotFound = APIErrorBody(
        errorCode: 4_040_007, errorMessage: "Server notification URL not found.", status: .notFound)
    static let rateLimitExceeded = APIErrorBody(errorCode: 4_290_000, errorMessage: "Rate limit exceeded.", status: .tooManyRequests)
    static let generalInternalRetryable = APIErrorBody(
        errorCode: 5_000_001, errorMessage: "An unknown error occurred. Please try again.", status: .serviceUnavailable)

    var response: Response { JSONBody.response(self, status: status) }
}
