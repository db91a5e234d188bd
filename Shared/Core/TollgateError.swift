/// Every error a Tollgate module throws: a stable machine `code` (what HTTP bodies, logs, scripts and tests
/// match on; never reworded) and a human `message`. Its `description` is `<code>: <message>`.
///
/// A module has one such type (``ConfigurationError`` here, `RedisError`, `PipelineError`, `LedgerError`,
/// `VerificationFailure`, …). `code` is a `String` or a string-backed code type.
package protocol TollgateError: Error, CustomStringConvertible {
    associatedtype Code: CustomStringConvertible
    /// The stable machine code, e.g. `invalid_configuration`.
    var code: Code { get }
    /// What went wrong, for a person; names the setting, key or input where there is one.
    var message: String { get }
}

extension TollgateError {
    package var description: String { "\(code): \(message)" }
}
