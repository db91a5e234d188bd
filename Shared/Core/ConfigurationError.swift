/// A setting is missing or malformed: `variable` is the environment variable, `problem` says what is wrong
/// (`is required`, `must be true or false`, …). Every executable stops at startup on it, naming the variable.
public struct ConfigurationError: TollgateError, Sendable, Hashable {
    public var variable: String
    public var problem: String

    public init(variable: String, problem: String) {
        self.variable = variable
        self.problem = problem
    }

    public var code: String { "invalid_configuration" }
    public var message: String { "\(variable) \(problem)" }
}
