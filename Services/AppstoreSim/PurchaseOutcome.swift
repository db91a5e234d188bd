import AppStore
import Foundation

/// What a purchase produced.
struct PurchaseOutcome: Sendable {
    var transaction: SimTransaction
    var receipt: String
    var orderId: String
    var signedTransaction: String
    var signedRenewalInfo: String?
    var notification: SimNotification
}
