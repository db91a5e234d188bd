import Hummingbird

/// A request's query parameters, decoded, by name (repeated names keep every value, in order).
struct QueryItems: Sendable {
    private var values: [String: [String]] = [:]

    init(_ request: Request) {
        for (key, value) in request.uri.queryParameters {
            values[String(key), default: []].append(String(value))
        }
    }

    /// The first value of `name`.
    subscript(_ name: String) -> String? { values[name]?.first }

    /// Every value of `name`.
    subscript(values name: String) -> [String] { values[name] ?? [] }
}
