import Core

/// Errors of the ledger module, each with a stable machine code.
package enum LedgerError: TollgateError, Sendable, Hashable {
    /// The catalog file cannot be read or is invalid; the message says where and why.
    case invalidCatalog(String)
    /// A verified-stream entry cannot be read as a purchase event (missing field, bad JSON).
    case malformedEvent(String)
    /// A ledger function answered something this code does not understand.
    case unexpectedReply(String)
    /// A cross-partition step was not acknowledged by enough replicas in time: the step that depends on it is not
    /// taken, and the entry is retried.
    case replicationTimeout(String)

    package var code: String {
        switch self {
        case .invalidCatalog: "invalid_catalog"
        case .malformedEvent: "malformed_event"
        case .unexpectedReply: "unexpected_reply"
        case .replicationTimeout: "replication_timeout"
        }
    }

    package var message: String {
        switch self {
        case .invalidCatalog(let message): "invalid catalog: \(message)"
        case .malformedEvent(let message): "malformed purchase event: \(message)"
        case .unexpectedReply(let message): "unexpected ledger reply: \(message)"
        case .replicationTimeout(let message): "not acknowledged by enough replicas: \(message)"
        }
    }
}
