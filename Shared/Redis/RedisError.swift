import Core

/// Everything that can go wrong talking to Redis, with a stable machine `code`.
///
/// The difference between `connectionFailed` and `unknownOutcome` matters to callers: the first means the
/// command was never sent (safe to retry), the second means it may or may not have run on the server.
package enum RedisError: TollgateError, Sendable, Hashable {
    /// The Redis URL is malformed; the message says what is wrong.
    case invalidURL(String)
    /// The server replied with an error, e.g. `-NOGROUP No such key…` has code `NOGROUP`. The connection is kept.
    case server(code: String, message: String)
    /// Could not (re)connect; the command was not sent.
    case connectionFailed(String)
    /// I/O error or timeout after the command may have been sent; the connection was dropped.
    case unknownOutcome(String)
    /// The reply could not be understood (unexpected shape or type).
    case protocolError(String)
    /// The pool or connection was shut down.
    case closed
    /// A cluster client refused a command whose keys hash to different slots; it was not sent.
    case crossSlot(String)

    /// A stable machine-readable code.
    package var code: String {
        switch self {
        case .invalidURL: "invalid_url"
        case .server: "server"
        case .connectionFailed: "connection_failed"
        case .unknownOutcome: "unknown_outcome"
        case .protocolError: "protocol"
        case .closed: "closed"
        case .crossSlot: "cross_slot"
        }
    }

    /// What went wrong, for a person.
    package var message: String {
        switch self {
        case .invalidURL(let message): "invalid Redis URL: \(message)"
        case .server(_, let message): "Redis server error: \(message)"
        case .connectionFailed(let message): "Redis connection failed: \(message)"
        case .unknownOutcome(let message): "Redis command outcome unknown: \(message)"
        case .protocolError(let message): "unexpected Redis reply: \(message)"
        case .closed: "Redis client closed"
        case .crossSlot(let message): "Redis Cluster: keys in different slots, not sent: \(message)"
        }
    }

    /// Builds `.server` from an error reply text such as `NOGROUP No such key 'x'`: the code is the first word.
    static func fromErrorReply(_ text: String) -> RedisError {
        let code = text.split(separator: " ", maxSplits: 1).first.map(String.init) ?? "ERR"
        return .server(code: code.isEmpty ? "ERR" : code, message: text)
    }
}
