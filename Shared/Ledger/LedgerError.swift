import Core

/// Errors of the ledger module, each with a stable machine code.
package enum LedgerError: TollgateError, Sendable, Hashable {
    /// The catalog file cannot be read or is invalid; the message says where and why.
    case invalidCatalog(String)
    /// A verified-stream entry cannot be read as a purchase event (missing field, bad JSON).
    case malformedEvent(String)
    /// A ledger function answered something this code does not understand.
    case unexpectedReply(String)

    package var code: String {
        switch self {
        case .invalidCatalog: "invalid_catalog"
        case .malformedEvent: "malformed_event"
        case .unexpectedReply: "unexpected_reply"
        }
    }

    package var message: String {
        switch self {
        case .invalidCatalog(let message): "invalid catalog: \(message)"
        case .malformedEvent(let message): "malformed purchase event: \(message)"
        case .unexpectedReply(let message): "unexpected ledger reply: \(message)"
        }
    }
}
