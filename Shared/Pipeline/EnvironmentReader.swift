import Foundation

/// Typed reads of environment variables; every failure names the variable. An empty or blank value is the
/// same as an unset one; values are trimmed.
public struct EnvironmentReader: Sendable {
    public let environment: [String: String]

    public init(_ environment: [String: String]) {
        self.environment = environment
    }

    public func optional(_ name: String) -> String? {
        guard let value = environment[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        return value
    }

    public func required(_ name: String) throws(PipelineError) -> String {
        guard let value = optional(name) else { throw .invalidConfiguration(variable: name, message: "is required") }
        return value
    }

    public func string(_ name: String, default fallback: String) throws(PipelineError) -> String {
        optional(name) ?? fallback
    }

    public func bool(_ name: String, default fallback: Bool) throws(PipelineError) -> Bool {
        guard let value = optional(name)?.lowercased() else { return fallback }
        switch value {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw .invalidConfiguration(variable: name, message: "must be true or false")
        }
    }

    public func int(_ name: String, default fallback: Int, range: ClosedRange<Int>) throws(PipelineError) -> Int {
        guard let text = optional(name) else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw .invalidConfiguration(variable: name, message: "must be a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    public func url(_ name: String, default fallback: URL) throws(PipelineError) -> URL {
        guard let text = optional(name) else { return fallback }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              url.host != nil else {
            throw .invalidConfiguration(variable: name, message: "must be an http(s) URL")
        }
        return url
    }

    /// A duration like `500ms`, `30s`, `10m`, `1h`, `2d` (or a number of seconds), at least `minimum`.
    public func duration(_ name: String, default fallback: Duration, minimum: Duration) throws(PipelineError) -> Duration {
        guard let text = optional(name) else { return fallback }
        guard let value = Self.parseDuration(text), value >= minimum else {
            throw .invalidConfiguration(
                variable: name, message: "must be a duration like 500ms, 30s, 10m, 1h or 2d (at least \(minimum))")
        }
        return value
    }

    /// Parses `500ms`, `30s`, `10m`, `1h`, `2d` or a number of seconds.
    public static func parseDuration(_ text: String) -> Duration? {
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
