import Foundation

/// Lenient readers for Apple's legacy (`verifyReceipt`, V1 notification) JSON, where numbers, booleans and
/// millisecond dates arrive as strings or as numbers depending on the field and the year. A value of an
/// unexpected type reads as `nil` instead of failing the whole payload.
extension KeyedDecodingContainer {
    /// A string, or a number written as its decimal text.
    func legacyString(_ key: Key) -> String? {
        if let text = try? decodeIfPresent(String.self, forKey: key) { return text }
        if let number = try? decodeIfPresent(Int64.self, forKey: key) { return String(number) }
        if let number = try? decodeIfPresent(UInt64.self, forKey: key) { return String(number) }
        return nil
    }

    /// An integer, from a number or from a string holding one.
    func legacyInt(_ key: Key) -> Int? {
        if let number = try? decodeIfPresent(Int.self, forKey: key) { return number }
        if let text = try? decodeIfPresent(String.self, forKey: key) {
            return Int(text.trimmingCharacters(in: .whitespaces))
        }
        if let number = try? decodeIfPresent(Double.self, forKey: key), number.rounded() == number,
            abs(number) < 9.0e15
        {
            return Int(number)
        }
        return nil
    }

    /// A boolean, from `true`/`false`, `1`/`0`, or those written as strings.
    func legacyBool(_ key: Key) -> Bool? {
        if let flag = try? decodeIfPresent(Bool.self, forKey: key) { return flag }
        if let number = try? decodeIfPresent(Int.self, forKey: key) { return number != 0 }
        if let text = try? decodeIfPresent(String.self, forKey: key) {
            switch text.trimmingCharacters(in: .whitespaces).lowercased() {
            case "true", "1", "yes": return true
            case "false", "0", "no": return false
            default: return nil
            }
        }
        return nil
    }

    /// A date given as milliseconds since 1970 (number or string).
    func legacyMillisDate(_ key: Key) -> Date? {
        guard let text = legacyString(key), let millis = Int64(text.trimmingCharacters(in: .whitespaces)) else {
            return nil
        }
        return Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
    }

    /// A date from the `…_ms` key, else from the plain key when it holds milliseconds (iOS 6 receipts) or
    /// Apple's `yyyy-MM-dd HH:mm:ss Etc/GMT` text.
    func legacyDate(millis millisKey: Key, text textKey: Key) -> Date? {
        if let date = legacyMillisDate(millisKey) { return date }
        if let date = legacyMillisDate(textKey) { return date }
        guard let text = try? decodeIfPresent(String.self, forKey: textKey) else { return nil }
        return LegacyDateText.parse(text)
    }

    /// A nested object, or `nil` when absent or unreadable.
    func legacyObject<T: Decodable>(_ type: T.Type, _ key: Key) -> T? {
        (try? decodeIfPresent(T.self, forKey: key)) ?? nil
    }

    /// An array of objects; a single object is read as a one-element array (iOS 6 responses send
    /// `latest_receipt_info` as an object). Absent or unreadable values read as an empty array.
    func legacyArray<T: Decodable>(_ type: T.Type, _ key: Key) -> [T] {
        if let array = try? decodeIfPresent([T].self, forKey: key) { return array }
        if let single = try? decodeIfPresent(T.self, forKey: key) { return [single] }
        return []
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
