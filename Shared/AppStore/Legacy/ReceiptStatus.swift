/// Apple's `verifyReceipt` status codes, what they mean, and how Tollgate treats each one.
package enum ReceiptStatus {
    package static let valid = 0
    package static let subscriptionExpired = 21006
    /// A sandbox receipt was sent to production.
    package static let sandboxReceipt = 21007
    /// A production receipt was sent to sandbox.
    package static let productionReceipt = 21008

    /// How a status other than `0`, `21006`, `21007` and `21008` is treated.
    package enum Treatment: Sendable, Hashable {
        case permanent(VerificationFailure)
        case retryable(VerificationFailure)
    }

    /// Apple's meaning of a status code.
    package static func meaning(of status: Int) -> String {
        switch status {
        case 0: return "The receipt is valid."
        case 21000: return "The request to the App Store was not made using the HTTP POST request method."
        case 21001: return "This status code is no longer sent by the App Store."
        case 21002: return "The data in the receipt-data property was malformed or the service experienced a temporary issue."
        case 21003: return "The system could not authenticate the receipt."
        case 21004: return "The shared secret you provided does not match the shared secret on file for your account."
        case 21005: return "The receipt server was temporarily unable to provide the receipt."
        case 21006: return "This receipt is valid, but the subscription is in an expired state."
        case 21007: return "This receipt is from the test environment, but it was sent to the production environment for verification."
        case 21008: return "This receipt is from the production environment, but it was sent to the test environment for verification."
        case 21009: return "Internal data access error."
        case 21010: return "The system cannot find the user account or the user account has been deleted."
        case 21100...21199: return "Internal data access error."
        default: return "Unknown verifyReceipt status."
        }
    }

    /// The treatment of an error status. `isRetryable` is Apple's `is-retryable` flag, which makes any
    /// error retryable when it is `true`.
    package static func treatment(of status: Int, isRetryable: Bool? = nil) -> Treatment {
        let message = "Apple status \(status): \(meaning(of: status))"
        switch status {
        case 21005, 21009, 21100...21199:
            return .retryable(VerificationFailure(.appleUnavailable, message))
        default:
            break
        }
        if isRetryable == true {
            return .retryable(VerificationFailure(.appleUnavailable, message))
        }
        switch status {
        case 21000: return .permanent(VerificationFailure(.receiptRequestInvalid, message))
        case 21002: return .permanent(VerificationFailure(.receiptMalformed, message))
        case 21003: return .permanent(VerificationFailure(.receiptNotAuthentic, message))
        case 21004: return .permanent(VerificationFailure(.sharedSecretMismatch, message))
        case 21010: return .permanent(VerificationFailure(.receiptUnauthorized, message))
        default: return .permanent(VerificationFailure(.receiptRejected, message))
        }
    }
}
