import AppStore
import Foundation

/// What an event changed and the notification it sent.
struct EventOutcome: Sendable {
    /// The transaction the notification is about (for a renewal, the new one).
    var transaction: SimTransaction
    var signedTransaction: String
    /// Nil when the event asked for no notification (`"notify": false`).
    var notification: SimNotification?
}
