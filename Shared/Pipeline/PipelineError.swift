/// What can go wrong in the pipeline module, with a stable machine `code` and a human message.
///
/// Configuration and startup errors name the environment variable to fix, so that an operator reading
/// `error: invalid_configuration: TOLLGATE_REDIS_URL: port must be 1-65535` knows where to look.
public enum PipelineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A setting is malformed. `variable` is the environment variable, `message` says what is wrong.
    case invalidConfiguration(variable: String, message: String)
    /// Redis could not be reached or refused the connection at startup.
    case redisUnavailable(variable: String, message: String)
    /// `FUNCTION LOAD` of the pipeline library failed.
    case functionLoadFailed(String)
    /// Redis answered with something the pipeline did not expect.
    case unexpectedReply(String)
    /// A stream entry lacks a field or has one that cannot be read; `id` is the entry id.
    case malformedEntry(id: String, message: String)

    /// A stable machine-readable code.
    public var code: String {
        switch self {
        case .invalidConfiguration: "invalid_configuration"
        case .redisUnavailable: "redis_unavailable"
        case .functionLoadFailed: "function_load_failed"
        case .unexpectedReply: "unexpected_reply"
        case .malformedEntry: "malformed_entry"
        }
    }

    /// The human message, naming the variable where there is one.
    public var message: String {
        switch self {
        case .invalidConfiguration(let variable, let message), .redisUnavailable(let variable, let message):
            "\(variable): \(message)"
        case .functionLoadFailed(let message): "cannot load the pipeline functions: \(message)"
        case .unexpectedReply(let message): "unexpected Redis reply: \(message)"
        case .malformedEntry(let id, let message): "stream entry \(id) is malformed: \(message)"
        }
    }

    public var description: String { "\(code): \(message)" }
}
