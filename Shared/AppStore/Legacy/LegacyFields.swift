import Core
import Foundation

/// Lenient readers for Apple's legacy (`verifyReceipt`, V1 notification) JSON, where numbers, booleans and
/// millisecond dates arrive as strings or as numbers depending on the field and the year. A value of an
/// unexpected type reads as `nil` instead of failing the whole payload.
///
/// They read a document ``Core/JSONReader`` parsed (``VerifyReceiptResponse/read(_:)``, the verifier's receipt path)
/// or, through `Codable` (each model's `init(from:)`), the decoder's value as a ``Core/JSONValue``: one set of rules
/// for both. `Codable`'s containers, trying each type in turn and throwing on every miss, were 15 % of the verifier's
/// CPU per receipt.
struct LegacyFields<Key: CodingKey> {
    let members: [String: JSONValue]

    /// An object's members; nil for any other value.
    init?(_ value: JSONValue) {
        guard case .object(let members) = value else { return nil }
        self.members = members
    }

    /// The decoder's value, which must be an object.
    init(_ decoder: any Decoder) throws {
        guard let fields = Self(try JSONValue(from: decoder)) else {
            throw DecodingError.typeMismatch(
                [String: JSONValue].self, .init(codingPath: decoder.codingPath, debugDescription: "not an object"))
        }
        self = fields
    }

    private init(members: [String: JSONValue]) { self.members = members }

    /// The same object read with another model's keys.
    func rekeyed<Other: CodingKey>(_ keys: Other.Type = Other.self) -> LegacyFields<Other> {
        LegacyFields<Other>(members: members)
    }

    /// `key` is missing (as `decodeIfPresent` would say it, for an error's message).
    func missing(_ key: Key, _ message: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: [key], debugDescription: message))
    }

    /// A string, or a number written as its decimal text. (A JSON number of 2^63 or more, which `JSONDecoder` read
    /// as a `UInt64`, is nil here: ``Core/JSONReader`` keeps it as a `Double`. Apple writes its ids as strings.)
    func legacyString(_ key: Key) -> String? {
        switch members[key.stringValue] {
        case .string(let text)?: return text
        case .integer(let number)?: return String(number)
        case .double(let number)?:
            if let whole = Int64(exactly: number) { return String(whole) }
            return UInt64(exactly: number).map { String($0) }
        default: return nil
        }
    }

    /// An integer, from a number or from a string holding one.
    func legacyInt(_ key: Key) -> Int? {
        switch members[key.stringValue] {
        case .integer(let number)?: return Int(exactly: number)
        case .string(let text)?: return Int(Self.trimmed(text))
        case .double(let number)?: return number.rounded() == number && abs(number) < 9.0e15 ? Int(number) : nil
        default: return nil
        }
    }

    /// A boolean, from `true`/`false`, `1`/`0`, or those written as strings.
    func legacyBool(_ key: Key) -> Bool? {
        switch members[key.stringValue] {
        case .bool(let flag)?: return flag
        case .integer(let number)?: return number != 0
        case .double(let number)?: return Int(exactly: number).map { $0 != 0 }
        case .string(let text)?:
            switch Self.trimmed(text).lowercased() {
            case "true", "1", "yes": return true
            case "false", "0", "no": return false
            default: return nil
            }
        default: return nil
        }
    }

    /// A date given as milliseconds since 1970 (number or string).
    func legacyMillisDate(_ key: Key) -> Date? {
        guard let text = legacyString(key), let millis = Int64(Self.trimmed(text)) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
    }

    /// A date from the `…_ms` key, else from the plain key when it holds milliseconds (iOS 6 receipts) or
    /// Apple's `yyyy-MM-dd HH:mm:ss Etc/GMT` text.
    func legacyDate(millis millisKey: Key, text textKey: Key) -> Date? {
        if let date = legacyMillisDate(millisKey) { return date }
        if let date = legacyMillisDate(textKey) { return date }
        guard case .string(let text)? = members[textKey.stringValue] else { return nil }
        return LegacyDateText.parse(text)
    }

    /// A nested object, or `nil` when absent or unreadable.
    func legacyObject<T: LegacyDecodable>(_ type: T.Type, _ key: Key) -> T? {
        guard let value = members[key.stringValue], let fields = LegacyFields<T.CodingKeys>(value) else { return nil }
        return try? T(legacy: fields)
    }

    /// An array of objects; a single object is read as a one-element array (iOS 6 responses send
    /// `latest_receipt_info` as an object). Absent or unreadable values read as an empty array, and so does an
    /// array with any unreadable element.
    func legacyArray<T: LegacyDecodable>(_ type: T.Type, _ key: Key) -> [T] {
        switch members[key.stringValue] {
        case .array(let values)?:
            var elements: [T] = []
            elements.reserveCapacity(values.count)
            for value in values {
                guard let fields = LegacyFields<T.CodingKeys>(value), let element = try? T(legacy: fields) else { return [] }
                elements.append(element)
            }
            return elements
        case .object?:
            return legacyObject(type, key).map { [$0] } ?? []
        default:
            return []
        }
    }

    /// `text` without the blanks `CharacterSet.whitespaces` names around it; the usual text has none and is
    /// returned as it is (`trimmingCharacters(in:)` goes through NSString on Linux).
    private static func trimmed(_ text: String) -> String {
        guard let first = text.unicodeScalars.first, let last = text.unicodeScalars.last,
            CharacterSet.whitespaces.contains(first) || CharacterSet.whitespaces.contains(last)
        else { return text }
        return text.trimmingCharacters(in: .whitespaces)
    }
}

/// A legacy model read by ``LegacyFields`` with its own coding keys.
protocol LegacyDecodable {
    associatedtype CodingKeys: CodingKey
    init(legacy container: LegacyFields<CodingKeys>) throws
}

extension LegacyDecodable {
    /// The model from a document's bytes, read with ``Core/JSONReader``.
    static func readLegacy(_ bytes: [UInt8]) throws -> Self {
        guard let fields = LegacyFields<CodingKeys>(try JSONReader.parse(bytes)) else {
            throw JSONError("the document is not an object")
        }
        return try Self(legacy: fields)
    }
}

/// Apple's legacy textual date, `2020-11-13 01:09:23 Etc/GMT`.
enum LegacyDateText {
    static func parse(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        guard parts.count >= 2, parts.count <= 3 else { return nil }
        if parts.count == 3, parts[2] != "Etc/GMT", parts[2] != "GMT", parts[2] != "UTC" { return nil }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        return formatter.date(from: "\(parts[0]) \(parts[1])")
    }
}
