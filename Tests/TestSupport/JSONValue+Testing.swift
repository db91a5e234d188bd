package import Core
package import Foundation

/// What tests read out of answers and stored documents, through Core's reader (as the services read them): a value's
/// text, number, flag or elements, nil when it is of another type.
extension JSONValue {
    /// `bytes` read by ``Core/JSONReader``, nil when it refuses them.
    package static func read(_ bytes: some Sequence<UInt8>) -> JSONValue? {
        try? JSONReader.parse(Array(bytes))
    }

    /// The value written by Core's ``Core/JSONWriter`` (keys in byte order), as `Data` for the signers and clients.
    package var data: Data {
        var writer = JSONWriter()
        writer.value(self)
        return Data(writer.bytes)
    }

    package var string: String? {
        guard case .string(let text) = self else { return nil }
        return text
    }

    /// An integer (a number written without fraction or exponent).
    package var int: Int? {
        guard case .integer(let number) = self else { return nil }
        return Int(number)
    }

    package var bool: Bool? {
        guard case .bool(let flag) = self else { return nil }
        return flag
    }

    package var array: [JSONValue]? {
        guard case .array(let values) = self else { return nil }
        return values
    }

    package var members: [String: JSONValue]? {
        guard case .object(let members) = self else { return nil }
        return members
    }

    /// The element at `index` of an array, nil past its end or for another type.
    package subscript(index: Int) -> JSONValue? {
        guard case .array(let values) = self, values.indices.contains(index) else { return nil }
        return values[index]
    }
}
