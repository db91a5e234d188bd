/// A setting is missing or malformed: `variable` is the environment variable, `problem` says what is wrong
/// (`is required`, `must be true or false`, …). Every executable stops at startup on it, naming the variable.
package struct ConfigurationError: TollgateError, Sendable, Hashable {
    package var variable: String
    package var problem: String

    package init(variable: String, problem: String) {
        self.variable = variable
        self.problem = problem
    }

    package var code: String { "invalid_configuration" }
    package var message: String { "\(variable) \(problem)" }
}
