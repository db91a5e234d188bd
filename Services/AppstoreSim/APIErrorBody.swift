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
    static let originalTransactionIdNotFound = APIErrorBody(
        errorCode: 4_040_005, errorMessage: "Original transaction id not found.", status: .notFound)
    static let invalidExtendByDays = APIErrorBody(errorCode: 4_000_009, errorMessage: "Invalid extend by days value.", status: .badRequest)
    static let invalidExtendReasonCode = APIErrorBody(
        errorCode: 4_000_010, errorMessage: "Invalid extend reason code.", status: .badRequest)
    static let invalidRequestIdentifier = APIErrorBody(
        errorCode: 4_000_011, errorMessage: "Invalid request identifier.", status: .badRequest)
    static let subscriptionExtensionIneligible = APIErrorBody(
        errorCode: 4_030_004, errorMessage: "Forbidden - subscription state ineligible for extension.", status: .forbidden)
    static let subscriptionMaxExtension = APIErrorBody(
        errorCode: 4_030_005, errorMessage: "Forbidden - subscription has reached maximum extension count.", status: .forbidden)
    static let invalidProductId = APIErrorBody(errorCode: 4_000_023, errorMessage: "Invalid product id.", status: .badRequest)
    static let massExtensionNotFound = APIErrorBody(
        errorCode: 4_040_009, errorMessage: "Mass extension request not found.", status: .notFound)
    static let invalidAppAccountTokenUUID = APIErrorBody(
        errorCode: 4_000_183, errorMessage: "Invalid request. The app account token field must be a valid UUID.", status: .badRequest)
    static let familyTransactionNotSupported = APIErrorBody(
        errorCode: 4_000_185, errorMessage: "Invalid request. Family Sharing transactions aren't supported by this endpoint.",
        status: .badRequest)
    static let transactionIdNotOriginalTransactionId = APIErrorBody(
        errorCode: 4_000_187, errorMessage: "Invalid request. The transaction ID provided is not an original transaction ID.",
        status: .badRequest)
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
