import AppStore
import Foundation

/// What an event changed and the notification it sent.
struct EventOutcome: Sendable {
    /// The transaction the notification is about (for a renewal, the new one).
    var transaction: SimTransaction
    var signedTransaction: String
    var notification: SimNotification
}
