/// Any JSON value: a document as ``JSONReader`` reads it, for the hot paths that decode by hand instead of through
/// `Codable` (the fulfiller's events and the ledger's answers; `Codable`'s containers cost more than the parse);
/// and, through its `Codable` conformance, Apple's newer objects that Tollgate keeps as they came.
package enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number written as an integer (no fraction or exponent) that fits in 64 bits.
    case integer(Int64)
    /// Any other number.
    case double(Double)
    case string(String)
    case array([JSONValue])
    /// An object; a document with the same key twice in one object is refused, not resolved.
    case object([String: JSONValue])

    /// The member `key` of an object, or `nil`.
    package subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The JSON type's name, for error messages.
    package var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .integer, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}

/// Why a document could not be read, or a value not mapped to a type: a message naming the place.
package struct JSONError: Error, Sendable, Hashable, CustomStringConvertible {
    package var message: String

    package init(_ message: String) { self.message = message }

    package var description: String { message }
}

/// The members of one object, read by name with the type each must have: absent and `null` are the same for
/// the optional readers (as `Codable`'s `decodeIfPresent`); a present value of another type is an error.
package struct JSONFields: Sendable {
    package let members: [String: JSONValue]
    /// Where this object is, for error messages (`transactions[2]`).
    package let path: String

    package init(_ value: JSONValue, path: String = "") throws(JSONError) {
        guard case .object(let members) = value else {
            throw JSONError("\(path.isEmpty ? "the document" : path) is \(value.typeName), not an object")
        }
        self.members = members
        self.path = path
    }

    private func present(_ key: String) -> JSONValue? {
        guard let value = members[key], value != .null else { return nil }
        return value
    }

    private func mismatch(_ key: String, _ value: JSONValue, _ expected: String) -> JSONError {
        JSONError("\(path.isEmpty ? key : path + "." + key) is \(value.typeName), not \(expected)")
    }

    private func required<T>(_ key: String, _ read: (String) throws(JSONError) -> T?) throws(JSONError) -> T {
        guard let value = try read(key) else { throw JSONError("\(path.isEmpty ? key : path + "." + key) is missing") }
        return value
    }

    package func optionalString(_ key: String) throws(JSONError) -> String? {
        guard let value = present(key) else { return nil }
        guard case .string(let string) = value else { throw mismatch(key, value, "a string") }
        return string
    }

    package func string(_ key: String) throws(JSONError) -> String { try required(key, optionalString) }

    package func optionalInt64(_ key: String) throws(JSONError) -> Int64? {
        guard let value = present(key) else { return nil }
        switch value {
        case .integer(let number): return number
        // As `JSONDecoder` does: a number written with a fraction or an exponent that is a whole 64-bit value
        // (Lua's cjson writes large integers as `1e+15`).
        case .double(let number): if let whole = Int64(exactly: number) { return whole }
        default: break
        }
        throw mismatch(key, value, "an integer")
    }

    package func int64(_ key: String) throws(JSONError) -> Int64 { try required(key, optionalInt64) }

    package func optionalInt(_ key: String) throws(JSONError) -> Int? { try optionalInt64(key).map { Int($0) } }

    package func int(_ key: String) throws(JSONError) -> Int { Int(try int64(key)) }

    package func optionalBool(_ key: String) throws(JSONError) -> Bool? {
        guard let value = present(key) else { return nil }
        guard case .bool(let flag) = value else { throw mismatch(key, value, "a boolean") }
        return flag
    }

    package func bool(_ key: String) throws(JSONError) -> Bool { try required(key, optionalBool) }

    /// An array's elements, each read by `element` with its index in the path; absent or `null` is empty only
    /// when `required` is false.
    package func array<T>(
        _ key: String, required: Bool = true, _ element: (JSONValue, String) throws(JSONError) -> T
    ) throws(JSONError) -> [T] {
        guard let value = present(key) else {
            if required { throw JSONError("\(path.isEmpty ? key : path + "." + key) is missing") }
            return []
        }
        guard case .array(let values) = value else { throw mismatch(key, value, "an array") }
        var result: [T] = []
        result.reserveCapacity(values.count)
        for (index, value) in values.enumerated() {
            result.append(try element(value, "\(path.isEmpty ? key : path + "." + key)[\(index)]"))
        }
        return result
    }

    /// Any value, kept as it is; nil when absent or `null` (Apple's newer objects Tollgate stores but does not read).
    package func optionalValue(_ key: String) -> JSONValue? { present(key) }

    /// An array of strings, or nil when absent or `null` (as `decodeIfPresent([String].self, …)`).
    package func optionalStrings(_ key: String) throws(JSONError) -> [String]? {
        guard present(key) != nil else { return nil }
        return try array(key) { (value, path) throws(JSONError) in
            guard case .string(let string) = value else { throw JSONError("\(path) is \(value.typeName), not a string") }
            return string
        }
    }

    /// A nested object's fields, or nil when absent or `null`.
    package func optionalObject(_ key: String) throws(JSONError) -> JSONFields? {
        guard let value = present(key) else { return nil }
        return try JSONFields(value, path: path.isEmpty ? key : path + "." + key)
    }

    /// A string member mapped through `init?(rawValue:)` (an enum), an error when it names no case.
    package func raw<T: RawRepresentable>(_ key: String, as type: T.Type) throws(JSONError) -> T where T.RawValue == String {
        let text = try string(key)
        guard let value = T(rawValue: text) else {
            throw JSONError("\(path.isEmpty ? key : path + "." + key) is not a known value (\(text.prefix(40)))")
        }
        return value
    }
}
