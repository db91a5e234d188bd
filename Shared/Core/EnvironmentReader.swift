package import Foundation
package import Logging

/// The one reader of settings from the environment, with one rule for every service:
///
/// - A value is trimmed of spaces, tabs and newlines; an empty or blank value is the same as an unset one
///   (the default applies). `TOLLGATE_X=` in an env file never means "zero" or "off".
/// - Booleans: `true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`, in any case.
/// - Numbers are decimal whole numbers inside the range the setting names; durations are `500ms`, `30s`,
///   `10m`, `1h`, `2d` or a number of seconds.
/// - `LOG_LEVEL` is one of swift-log's levels, with `warn` for `warning`.
/// - Anything else throws a ``ConfigurationError`` naming the variable and what it must be.
package struct EnvironmentReader: Sendable {
    package let environment: [String: String]

    package init(_ environment: [String: String]) {
        self.environment = environment
    }

    /// The trimmed value, or `nil` when unset, empty or blank.
    package func optional(_ name: String) -> String? {
        guard let value = environment[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else {
            return nil
        }
        return value
    }

    package func required(_ name: String, _ what: String? = nil) throws(ConfigurationError) -> String {
        guard let value = optional(name) else {
            throw ConfigurationError(variable: name, problem: what.map { "is required (\($0))" } ?? "is required")
        }
        return value
    }

    package func string(_ name: String, default fallback: String) -> String {
        optional(name) ?? fallback
    }

    /// A comma-separated list; items are trimmed and empty items dropped.
    package func list(_ name: String) -> [String] {
        (optional(name) ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }.filter { !$0.isEmpty }
    }

    package func bool(_ name: String, default fallback: Bool) throws(ConfigurationError) -> Bool {
        guard let value = optional(name)?.lowercased() else { return fallback }
        switch value {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw ConfigurationError(variable: name, problem: "must be true or false (or 1/0, yes/no, on/off)")
        }
    }

    package func int<Value: FixedWidthInteger & Sendable>(
        _ name: String, default fallback: Value, range: ClosedRange<Value>
    ) throws(ConfigurationError) -> Value {
        guard let text = optional(name) else { return fallback }
        guard let value = Value(text, radix: 10), range.contains(value) else {
            throw ConfigurationError(
                variable: name, problem: "must be a whole number in \(range.lowerBound)...\(range.upperBound), not '\(text.prefix(32))'")
        }
        return value
    }

    package func double(_ name: String, default fallback: Double, range: ClosedRange<Double>) throws(ConfigurationError) -> Double {
        guard let text = optional(name) else { return fallback }
        guard let value = Double(text), value.isFinite, range.contains(value) else {
            throw ConfigurationError(
                variable: name, problem: "must be a number in \(range.lowerBound)...\(range.upperBound), not '\(text.prefix(32))'")
        }
        return value
    }

    package func url(_ name: String, default fallback: URL) throws(ConfigurationError) -> URL {
        try optionalURL(name) ?? fallback
    }

    /// An `http` or `https` URL with a host, or `nil` when unset.
    package func optionalURL(_ name: String) throws(ConfigurationError) -> URL? {
        guard let text = optional(name) else { return nil }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host != nil
        else {
            throw ConfigurationError(variable: name, problem: "must be an http(s) URL")
        }
        return url
    }

    /// A duration like `500ms`, `30s`, `10m`, `1h`, `2d` (or a number of seconds), at least `minimum`.
    package func duration(_ name: String, default fallback: Duration, minimum: Duration) throws(ConfigurationError) -> Duration {
        guard let text = optional(name) else { return fallback }
        guard let value = Self.parseDuration(text), value >= minimum else {
            throw ConfigurationError(
                variable: name, problem: "must be a duration like 500ms, 30s, 10m, 1h or 2d (at least \(minimum))")
        }
        return value
    }

    /// A whole number of milliseconds in `range` (the `*_MS` settings), as a `Duration`.
    package func milliseconds(_ name: String, default fallback: Int, range: ClosedRange<Int>) throws(ConfigurationError) -> Duration {
        .milliseconds(try int(name, default: fallback, range: range))
    }

    /// `LOG_LEVEL`-style: trace, debug, info, notice, warning (or warn), error, critical.
    package func logLevel(_ name: String = "LOG_LEVEL", default fallback: Logger.Level = .info) throws(ConfigurationError) -> Logger.Level {
        guard let text = optional(name)?.lowercased() else { return fallback }
        guard let level = Logger.Level(rawValue: text == "warn" ? "warning" : text) else {
            throw ConfigurationError(
                variable: name, problem: "must be one of trace, debug, info, notice, warning, error, critical, not '\(text.prefix(32))'")
        }
        return level
    }

    /// Parses `500ms`, `30s`, `10m`, `1h`, `2d` or a number of seconds.
    package static func parseDuration(_ text: String) -> Duration? {
        let units: [(String, Int64)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000)]
        let lowered = text.lowercased()
        for (suffix, factor) in units where lowered.hasSuffix(suffix) {
            guard let value = Int64(lowered.dropLast(suffix.count)), value >= 0, value <= Int64.max / factor else { return nil }
            return .milliseconds(value * factor)
        }
        guard let seconds = Int64(lowered), seconds >= 0, seconds <= Int64.max / 1000 else { return nil }
        return .seconds(seconds)
    }
}
