import Foundation
import Pipeline

/// Typed reads of environment variables; every failure names the variable.
struct EnvironmentReader {
    let environment: [String: String]

    init(_ environment: [String: String]) {
        self.environment = environment
    }

    func optional(_ name: String) -> String? {
        guard let value = environment[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        return value
    }

    func required(_ name: String) throws(PipelineError) -> String {
        guard let value = optional(name) else { throw .invalidConfiguration(variable: name, message: "is required") }
        return value
    }

    func string(_ name: String, default fallback: String) throws(PipelineError) -> String {
        optional(name) ?? fallback
    }

    func bool(_ name: String, default fallback: Bool) throws(PipelineError) -> Bool {
        guard let value = optional(name)?.lowercased() else { return fallback }
        switch value {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw .invalidConfiguration(variable: name, message: "must be true or false")
        }
    }

    func int(_ name: String, default fallback: Int, range: ClosedRange<Int>) throws(PipelineError) -> Int {
        guard let text = optional(name) else { return fallback }
        guard let value = Int(text), range.contains(value) else {
            throw .invalidConfiguration(variable: name, message: "must be a whole number in \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    func url(_ name: String, default fallback: URL) throws(PipelineError) -> URL {
        guard let text = optional(name) else { return fallback }
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
              url.host != nil else {
            throw .invalidConfiguration(variable: name, message: "must be an http(s) URL")
        }
        return url
    }
}
