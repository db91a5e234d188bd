import Foundation

/// Parses an HTTP `Retry-After` value (RFC 9110 §10.2.3): either a number of seconds or an HTTP date.
public enum RetryAfter {
    /// The delay the value asks for, never negative; `nil` when the value is neither form.
    public static func parse(_ value: String, now: Date = Date()) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed) {
            return seconds >= 0 ? .seconds(seconds) : nil
        }
        guard let date = httpDate(trimmed) else { return nil }
        let interval = max(0, date.timeIntervalSince(now))
        return .seconds(Int(interval.rounded(.up)))
    }

    private static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: text) { return date }
        }
        return nil
    }
}
